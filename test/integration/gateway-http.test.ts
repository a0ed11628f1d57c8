import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { within } from "../support/bounded-waits.js";
import { SPEECH_FORMAT, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
/** How long a step that has an end may take before the test says which step hung. */
const STEP_MS = 15_000;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A plain TCP connection to the gateway that sends `bytes` (maybe none) and nothing after; `ended` once the server cuts it. */
async function heldConnection(
  httpUrl: string,
  bytes = "",
): Promise<{ socket: Socket; ended: Promise<void> }> {
  const socket = connect(Number(new URL(httpUrl).port), "127.0.0.1");
  const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {}); // ECONNRESET when the server cuts it: that is what the test waits for
  socket.resume(); // whatever the server answers is read and dropped: only its end matters
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  if (bytes) socket.write(bytes);
  return { socket, ended };
}

describe("gateway HTTP routes and lifecycle", () => {
  it("GET /healthz answers liveness", async () => {
    h = await startGateway();
    const res = await fetch(`${h.httpUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, status: "ready" });
  });

  it("GET /readyz reports provider and coordinator checks, and 503 when one fails", async () => {
    h = await startGateway({
      deps: {
        readiness: async () => ({
          ok: false,
          checks: { providers: { ok: false, detail: "espeak-ng missing" } },
        }),
      },
    });
    const res = await fetch(`${h.httpUrl}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      ok: false,
      checks: { providers: { ok: false, detail: "espeak-ng missing" }, gateway: { ok: true } },
    });
  });

  it("GET /readyz is 200 when everything is ready", async () => {
    h = await startGateway();
    const res = await fetch(`${h.httpUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      checks: { providers: { ok: true }, coordinator: { ok: true } },
    });
  });

  it("GET /metrics exposes sessions, turns, events, requests and errors in Prometheus format", async () => {
    h = await startGateway();
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
      inputFormat: SPEECH_FORMAT,
    });
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await client.request("talk.session.cancelTurn", { sessionId, turnId });
    await rejectionOf(client.requestUntyped("talk.nope"));
    const res = await fetch(`${h.httpUrl}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^talkgate_sessions_active 1$/m);
    expect(text).toMatch(/^talkgate_sessions_total\{mode="stt-tts"\} 1$/m);
    expect(text).toMatch(/^talkgate_turns_total\{outcome="cancelled"\} 1$/m);
    expect(text).toMatch(/^talkgate_events_total\{family="turn"\} [1-9]/m);
    expect(text).toMatch(/^talkgate_rpc_requests_total\{method="talk.session.create",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^talkgate_rpc_errors_total\{code="unknown_method"\} 1$/m);
    expect(text).toMatch(/^talkgate_ws_connections 1$/m);
  });

  it("two servers in one process keep separate metrics", async () => {
    h = await startGateway();
    const other = await startGateway();
    try {
      const client = await other.connect();
      await client.request("talk.mode");
      const mine = await (await fetch(`${h.httpUrl}/metrics`)).text();
      expect(mine).not.toMatch(/talkgate_rpc_requests_total\{method="talk.mode"/);
    } finally {
      await other.close();
    }
  });

  it("close() closes sockets with 1001, ends sessions with a terminal event, and is idempotent", async () => {
    h = await startGateway();
    const client = await h.connect();
    const events: string[] = [];
    client.on("talk.event", (e) => events.push(e.type));
    const closed = new Promise<{ code: number }>((resolve) => client.on("close", resolve));
    await client.request("talk.session.create", { mode: "stt-tts", transport: "managed-room" });
    const first = h.server.close();
    expect(h.server.close()).toBe(first);
    await first;
    expect((await closed).code).toBe(1001);
    expect(events).toContain("session.closed");
    expect(h.server.state).toBe("closed");
    expect((await rejectionOf(client.request("talk.mode"))).code).toBe("cancelled");
  });

  it("close() finishes while clients hold connections that sent no request, or half of one", async () => {
    // A browser keeps sockets it opened and did not use (a preconnect, or one a request did not wait for)
    // in its pool for seconds; the HTTP server's close closes idle keep-alive sockets only and waits for these.
    h = await startGateway();
    const silent = await heldConnection(h.httpUrl);
    const half = await heldConnection(h.httpUrl, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const held = [silent, half];
    try {
      await within(STEP_MS, h.server.close(), "close the gateway");
      expect(h.server.state).toBe("closed");
      await within(STEP_MS, Promise.all(held.map((c) => c.ended)), "the held connections cut");
      expect(h.logLines).toContainEqual(
        expect.objectContaining({ msg: "gateway close: connections still open were cut", sockets: 2 }),
      );
    } finally {
      for (const c of held) c.socket.destroy();
    }
  });

  it("close() finishes while a WebSocket peer outside the Talk API never answers the close frame", async () => {
    h = await startGateway();
    // The capture route closes a socket naming no bot at once (4401) and waits for the peer's close frame,
    // which this peer never sends: ws alone would wait 30 s before cutting it.
    const peer = await heldConnection(
      h.httpUrl,
      "GET /meetings/bots/nobody/capture HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n" +
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    try {
      const answer = await new Promise<string>((resolve) =>
        peer.socket.once("data", (d: Buffer) => resolve(d.toString())),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 101 /);
      await within(STEP_MS, h.server.close(), "close the gateway");
      expect(h.server.state).toBe("closed");
      await within(STEP_MS, peer.ended, "the peer cut");
    } finally {
      peer.socket.destroy();
    }
  });

  it("a request pending when the connection closes rejects with a coded error", async () => {
    h = await startGateway();
    const client = await h.connect();
    const pending = rejectionOf(
      client.request("talk.speak", { text: "A sentence that takes a moment to say." }),
    );
    await client.close();
    const err = await pending;
    expect(err.code).toBe("cancelled");
    expect(err.details).toMatchObject({ closeCode: 1000 });
  });

  it("a request the server does not answer in time rejects with timeout", async () => {
    h = await startGateway({
      deps: { catalog: () => new Promise(() => {}) },
    });
    // The request's own timeout, not the client's default: the request after it must not race 50 ms on a
    // loaded machine (it did in CI at 072845d).
    const client = await h.connect();
    expect((await rejectionOf(client.request("talk.catalog", {}, { timeoutMs: 50 }))).code).toBe("timeout");
    // The connection is still usable afterwards.
    await expect(client.request("talk.mode")).resolves.toMatchObject({ enabled: false });
  });
});
