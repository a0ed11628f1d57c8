import { afterEach, describe, expect, it } from "vitest";
import { SPEECH_FORMAT, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

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
    const client = await h.connect({ requestTimeoutMs: 50 });
    expect((await rejectionOf(client.request("talk.catalog"))).code).toBe("timeout");
    // The connection is still usable afterwards.
    await expect(client.request("talk.mode")).resolves.toMatchObject({ enabled: false });
  });
});
