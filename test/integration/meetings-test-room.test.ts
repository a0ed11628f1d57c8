/**
 * The local test meeting relays anything between its peers, so it is not
 * served unless asked for (default: only on a loopback server without auth),
 * and when it is, its socket is behind the process's one authorizer, with
 * per-room and total socket limits and a message size limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type App, createApp } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";

const WRITER = "room-writer-token-0123456789";
const READER = "room-reader-token-0123456789";

let app: App | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(config: Record<string, unknown>): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), "talkgate-room-"));
  const loaded = validateConfig(
    { server: { host: "127.0.0.1", port: 0 }, dataDir: dir, log: { level: "silent" }, ...config },
    { env: {} },
  );
  app = await createApp(loaded);
  const { urls } = await app.listen({ port: 0 });
  return urls[0] as string;
}

const authOn = {
  auth: {
    tokens: [
      { name: "writer", token: WRITER, scopes: ["write"] },
      { name: "reader", token: READER, scopes: ["read"] },
    ],
  },
};

/** Opens the room's socket; resolves with the first message, or the refusal (HTTP status or close code). */
function enter(
  base: string,
  room: string,
  token?: string,
): Promise<{ ws: WebSocket; welcome?: Record<string, unknown>; status?: number; close?: number }> {
  const url = `${base.replace(/^http/, "ws")}/meetings/test-room/${room}/ws?name=p`;
  const ws = token ? new WebSocket(url, ["talkgate", `bearer.${token}`]) : new WebSocket(url);
  return new Promise((resolve) => {
    ws.on("unexpected-response", (_req, res) => resolve({ ws, status: res.statusCode }));
    ws.on("error", () => {});
    ws.once("message", (data) =>
      resolve({ ws, welcome: JSON.parse(String(data)) as Record<string, unknown> }),
    );
    ws.once("close", (code) => resolve({ ws, close: code }));
  });
}

describe("the local test meeting", () => {
  it("is not served with auth on unless enabled: the page and its socket are 404", async () => {
    const base = await start(authOn);
    expect((await fetch(`${base}/meetings/test-room/demo`)).status).toBe(404);
    const r = await enter(base, "demo", WRITER);
    expect(r.status).toBe(404);
  });

  it("enabled with auth on: no token 401, a read token 403, a write token joins", async () => {
    const base = await start({ ...authOn, meetings: { testRoom: { enabled: true } } });
    expect((await fetch(`${base}/meetings/test-room/demo`)).status).toBe(200);
    expect((await enter(base, "demo")).status).toBe(401);
    expect((await enter(base, "demo", READER)).status).toBe(403);
    const joined = await enter(base, "demo", WRITER);
    expect(joined.welcome).toMatchObject({ type: "welcome", host: true });
    joined.ws.close();
  });

  it("served by default on a loopback server without auth, and not when disabled", async () => {
    const base = await start({});
    const joined = await enter(base, "demo");
    expect(joined.welcome?.["type"]).toBe("welcome");
    joined.ws.close();
    await app?.close();
    app = undefined;
    const off = await start({ meetings: { testRoom: { enabled: false } } });
    expect((await fetch(`${off}/meetings/test-room/demo`)).status).toBe(404);
  });

  it("refuses sockets above the per-room and total limits with 1013, and a too-large message with 1009", async () => {
    const base = await start({
      meetings: { testRoom: { maxSocketsPerRoom: 2, maxSockets: 3, maxMessageBytes: 1024 } },
    });
    const a = await enter(base, "one");
    const b = await enter(base, "one");
    expect((await enter(base, "one")).close).toBe(1013);
    const c = await enter(base, "two");
    expect(c.welcome?.["type"]).toBe("welcome");
    expect((await enter(base, "three")).close).toBe(1013);
    const closed = new Promise<number>((resolve) => c.ws.once("close", (code) => resolve(code)));
    c.ws.send(JSON.stringify({ type: "signal", to: "x", data: "y".repeat(2000) }));
    expect(await closed).toBe(1009);
    for (const s of [a, b]) s.ws.close();
  });
});
