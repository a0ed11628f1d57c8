/**
 * Issue 38, point 1: a write token must not be able to send the bot's
 * browser to an arbitrary host and port. The test room is this server's own
 * origin only, and only when it is served; every other platform driver takes
 * only its platform's hosts; and nothing tells a closed port, a non-HTTP
 * service and a 404 apart. Real services on loopback: a TCP service that
 * speaks no HTTP, a port nobody listens on, an HTTP server answering 404.
 * Each counts the connections it got: none may reach them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { type App, createApp } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import { connectTalk } from "./meetings-harness.js";

const WRITER = "ssrf-writer-token-0123456789";
const auth = { auth: { tokens: [{ name: "writer", token: WRITER, scopes: ["write"] }] } };

const portOf = (server: TcpServer | HttpServer): number => (server.address() as AddressInfo).port;

describe("what a write token can make the bot's browser fetch", () => {
  const dirs: string[] = [];
  const apps: App[] = [];
  const sockets: WebSocket[] = [];
  let tcp: TcpServer;
  let http: HttpServer;
  let closedPort: number;
  const reached = { tcp: 0, http: 0 };

  async function start(meetings: Record<string, unknown>): Promise<{ app: App; base: string }> {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-ssrf-"));
    dirs.push(dir);
    const app = await createApp(
      validateConfig(
        {
          server: { host: "127.0.0.1", port: 0 },
          dataDir: dir,
          log: { level: "silent" },
          meetings: { pollIntervalMs: 100, ...meetings },
          ...auth,
        },
        { env: {} },
      ),
    );
    apps.push(app);
    const { urls } = await app.listen({ port: 0 });
    return { app, base: urls[0] as string };
  }

  beforeAll(async () => {
    tcp = createTcpServer((socket) => {
      reached.tcp++;
      socket.end("SSH-2.0-OpenSSH_9.2\r\n");
    });
    http = createHttpServer((_req, res) => {
      reached.http++;
      res.writeHead(404).end("not here");
    });
    const free = createTcpServer();
    await Promise.all([
      new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r)),
      new Promise<void>((r) => http.listen(0, "127.0.0.1", r)),
      new Promise<void>((r) => free.listen(0, "127.0.0.1", r)),
    ]);
    closedPort = portOf(free);
    await new Promise<void>((r) => free.close(() => r()));
  });

  afterAll(async () => {
    for (const ws of sockets) ws.close();
    await Promise.all(apps.map((a) => a.close()));
    tcp?.close();
    http?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  const targets = (): [string, number][] => [
    ["a non-HTTP service", portOf(tcp)],
    ["a closed port", closedPort],
    ["an HTTP 404", portOf(http)],
  ];

  /** POST /meetings/bots with the write token; answers the status and the error body. */
  const post = async (base: string, body: Record<string, unknown>) => {
    const res = await fetch(`${base}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${WRITER}` },
      body: JSON.stringify({ botName: "Bot", mode: "transcribe", ...body }),
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
  };

  it("with the test room off, refuses every test-room path on any loopback port, alike, and never connects", async () => {
    const { base } = await start({});
    const answers: string[] = [];
    for (const [what, port] of targets()) {
      for (const extra of [{}, { platform: "test-room" }]) {
        const res = await post(base, {
          meetingUrl: `http://127.0.0.1:${port}/meetings/test-room/x`,
          ...extra,
        });
        expect(res.status, `${what} ${JSON.stringify(extra)}`).toBe(400);
        expect(res.body.error?.code).toBe("invalid_params");
        answers.push(`${JSON.stringify(extra)} ${res.body.error?.message}`);
      }
      // Other platforms' drivers take only their own hosts.
      for (const platform of ["google-meet", "zoom", "teams"]) {
        const res = await post(base, { meetingUrl: `http://127.0.0.1:${port}/abc-defg-hij`, platform });
        expect(res.status, `${what} as ${platform}`).toBe(400);
      }
    }
    // The three targets got the same answers: nothing tells what listens there.
    expect(new Set(answers).size).toBe(2);
    // The Talk API's door is the same.
    const talk = await connectTalk(base, WRITER, sockets);
    for (const [, port] of targets()) {
      const res = await talk.call("meetings.bots.create", {
        meetingUrl: `http://127.0.0.1:${port}/meetings/test-room/x`,
        botName: "Bot",
        mode: "transcribe",
      });
      expect(res.ok).toBe(false);
      expect(res.error.code).toBe("invalid_params");
    }
    // Give a bot that wrongly started time to reach a target: none did.
    await new Promise((r) => setTimeout(r, 1500));
    expect(reached).toEqual({ tcp: 0, http: 0 });
  }, 30_000);

  it("with the test room on, takes a room on this server's own origin only", async () => {
    const { base } = await start({ testRoom: { enabled: true } });
    for (const [what, port] of targets()) {
      const res = await post(base, { meetingUrl: `http://127.0.0.1:${port}/meetings/test-room/x` });
      expect(res.status, what).toBe(400);
      expect(res.body.error?.code).toBe("invalid_params");
    }
    const own = await post(base, { meetingUrl: `${base}/meetings/test-room/own-room` });
    expect(own.status).toBe(201);
    await fetch(`${base}/meetings/bots/${(own.body as { id: string }).id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${WRITER}` },
    });
    expect(reached).toEqual({ tcp: 0, http: 0 });
  }, 30_000);
});
