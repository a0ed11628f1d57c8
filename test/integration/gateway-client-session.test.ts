import { afterEach, describe, expect, it } from "vitest";
import { PERSONA, recordEvents, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("talk.client.create: client-owned provider sessions", () => {
  it("mints an OpenAI Realtime client secret with Gateway-built instructions and policy-filtered tools", async () => {
    h = await startGateway();
    const client = await h.connect({ as: "writer" });
    const created = await client.request("talk.client.create", { transport: "webrtc", voice: "marin" });
    expect(created).toMatchObject({
      mode: "realtime",
      transport: "webrtc",
      brain: "agent-consult",
      provider: "openai",
      clientSecret: expect.stringMatching(/^ek_/),
      endpoint: expect.stringMatching(/\/realtime\/calls$/),
      voice: "marin",
      tools: ["echo", "slow"],
    });
    expect(Date.parse(created.expiresAt)).toBeGreaterThan(Date.now());
    const minted = h.openai.requests.find((r) => r.path.endsWith("/realtime/client_secrets"));
    const body = minted?.body as { session: { instructions: string; tools: { name: string }[] } };
    expect(body.session.instructions).toBe(PERSONA);
    expect(body.session.tools.map((t) => t.name)).toEqual(["echo", "slow"]);
    expect(h.runtime.getSession(created.sessionId)?.owner).toBe("client");
  });

  it("rejects Gateway-owned transports, pointing to talk.session.create", async () => {
    h = await startGateway();
    const client = await h.connect();
    for (const transport of ["gateway-relay", "managed-room"] as const) {
      const err = await rejectionOf(client.request("talk.client.create", { transport }));
      expect(err.code).toBe("use_talk_session_create");
      expect(err.details).toMatchObject({ method: "talk.session.create" });
    }
    expect(h.openai.requests).toHaveLength(0);
  });

  it("rejects combinations outside the creation matrix", async () => {
    h = await startGateway();
    const client = await h.connect();
    const err = await rejectionOf(
      client.request("talk.client.create", { transport: "webrtc", mode: "stt-tts" }),
    );
    expect(err.code).toBe("unsupported_combination");
  });

  it("an unknown provider is provider_not_found", async () => {
    h = await startGateway();
    const client = await h.connect();
    const err = await rejectionOf(
      client.request("talk.client.create", { transport: "webrtc", provider: "nope" }),
    );
    expect(err.code).toBe("provider_not_found");
  });
});

describe("talk.client.toolCall: provider tool calls under Gateway policy", () => {
  async function setup(): Promise<{
    client: Awaited<ReturnType<GatewayHarness["connect"]>>;
    sessionId: string;
  }> {
    h = await startGateway();
    const client = await h.connect({ as: "writer" });
    const { sessionId } = await client.request("talk.client.create", { transport: "provider-websocket" });
    return { client, sessionId };
  }

  it("runs an allowed tool and returns its output", async () => {
    const { client, sessionId } = await setup();
    const rec = recordEvents(client);
    const result = await client.request("talk.client.toolCall", {
      sessionId,
      callId: "call_1",
      name: "echo",
      argumentsJson: '{"q":1}',
    });
    expect(result).toEqual({ sessionId, callId: "call_1", output: '{"q":1}' });
    // Core's dispatcher correlates the call in the session's events, delivered to the owner.
    expect(rec.events.map((e) => e.type)).toEqual(expect.arrayContaining(["tool.call", "tool.result"]));
    expect(rec.events.find((e) => e.type === "tool.result")).toMatchObject({ callId: "call_1", sessionId });
    expect(result.output).toBe('{"q":1}');
  });

  it("a tool denied by policy is tool_denied", async () => {
    const { client, sessionId } = await setup();
    const err = await rejectionOf(
      client.request("talk.client.toolCall", { sessionId, callId: "c", name: "shell", argumentsJson: "{}" }),
    );
    expect(err.code).toBe("tool_denied");
  });

  it("a repeated callId is refused as stale", async () => {
    const { client, sessionId } = await setup();
    const call = { sessionId, callId: "dup", name: "echo", argumentsJson: "{}" };
    await client.request("talk.client.toolCall", call);
    expect((await rejectionOf(client.request("talk.client.toolCall", call))).code).toBe("invalid_state");
  });

  it("an unknown session is session_not_found and another connection is not_session_owner", async () => {
    const { sessionId } = await setup();
    const other = await h!.connect({ as: "writer" });
    const call = { callId: "c", name: "echo", argumentsJson: "{}" };
    expect(
      (await rejectionOf(other.request("talk.client.toolCall", { ...call, sessionId: "nope" }))).code,
    ).toBe("session_not_found");
    expect((await rejectionOf(other.request("talk.client.toolCall", { ...call, sessionId }))).code).toBe(
      "not_session_owner",
    );
  });

  it("a Gateway-owned session is refused, pointing to the talk.session verbs", async () => {
    h = await startGateway();
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
    });
    const err = await rejectionOf(
      client.request("talk.client.toolCall", { sessionId, callId: "c", name: "echo", argumentsJson: "{}" }),
    );
    expect(err.code).toBe("use_talk_session_create");
  });

  it("a closed session is session_closed", async () => {
    const { client, sessionId } = await setup();
    await client.request("talk.session.close", { sessionId });
    const err = await rejectionOf(
      client.request("talk.client.toolCall", { sessionId, callId: "c", name: "echo", argumentsJson: "{}" }),
    );
    expect(err.code).toBe("session_closed");
  });

  it("closing the session aborts a running tool, which sees its AbortSignal", async () => {
    const { client, sessionId } = await setup();
    const running = rejectionOf(
      client.request("talk.client.toolCall", {
        sessionId,
        callId: "slow_1",
        name: "slow",
        argumentsJson: "{}",
      }),
    );
    await h!.tools.slow.started;
    expect(h!.tools.slow.aborted).toHaveLength(0);
    await client.request("talk.session.close", { sessionId });
    expect((await running).code).toBe("cancelled");
    expect(h!.tools.slow.aborted).toHaveLength(1);
  });

  it("the owner disconnecting aborts its running tool and closes its client session", async () => {
    const { client, sessionId } = await setup();
    void client
      .request("talk.client.toolCall", { sessionId, callId: "s", name: "slow", argumentsJson: "{}" })
      .catch(() => {});
    await h!.tools.slow.started;
    await client.close();
    await expect.poll(() => h!.tools.slow.aborted.length).toBe(1);
    await expect.poll(() => h!.runtime.getSession(sessionId)?.state ?? "gone").not.toBe("active");
  });
});

describe("talk.client.toolCall: concurrent calls, each with its own signal", () => {
  async function setup() {
    h = await startGateway();
    const client = await h.connect({ as: "writer" });
    const { sessionId } = await client.request("talk.client.create", { transport: "provider-websocket" });
    return { client, sessionId, rec: recordEvents(client) };
  }

  it("a second call runs while a long one is still running", async () => {
    const { client, sessionId } = await setup();
    const slow = rejectionOf(
      client.request("talk.client.toolCall", {
        sessionId,
        callId: "long",
        name: "slow",
        argumentsJson: "{}",
      }),
    );
    await h!.tools.slow.started;
    const quick = await client.request("talk.client.toolCall", {
      sessionId,
      callId: "quick",
      name: "echo",
      argumentsJson: '{"n":2}',
    });
    expect(quick.output).toBe('{"n":2}');
    expect(h!.tools.slow.aborted).toHaveLength(0);
    await client.request("talk.session.close", { sessionId });
    expect((await slow).code).toBe("cancelled");
  });

  it("talk.client.cancelToolCall aborts one call only, with one terminal event per call", async () => {
    const { client, sessionId, rec } = await setup();
    const slow = rejectionOf(
      client.request("talk.client.toolCall", {
        sessionId,
        callId: "long",
        name: "slow",
        argumentsJson: "{}",
      }),
    );
    await h!.tools.slow.started;
    const cancelled = await client.request("talk.client.cancelToolCall", {
      sessionId,
      callId: "long",
      reason: "user_stopped",
    });
    expect(cancelled).toEqual({ sessionId, callId: "long", cancelled: true });
    expect((await slow).code).toBe("cancelled");
    expect(h!.tools.slow.aborted).toHaveLength(1);
    // The session and its other calls go on.
    const after = await client.request("talk.client.toolCall", {
      sessionId,
      callId: "next",
      name: "echo",
      argumentsJson: "{}",
    });
    expect(after.output).toBe("{}");
    await rec.next((e) => e.type === "tool.result" && e.callId === "next");
    const terminal = (callId: string) =>
      rec.events.filter(
        (e) => e.callId === callId && ["tool.result", "tool.error", "tool.cancelled"].includes(e.type),
      );
    expect(terminal("long")).toHaveLength(1);
    expect(terminal("long")[0]).toMatchObject({
      type: "tool.cancelled",
      payload: { reason: "user_stopped" },
    });
    expect(terminal("next")).toHaveLength(1);
    // A finished or unknown call is not cancelled again.
    expect(await client.request("talk.client.cancelToolCall", { sessionId, callId: "long" })).toEqual({
      sessionId,
      callId: "long",
      cancelled: false,
    });
    const other = await h!.connect({ as: "writer" });
    expect(
      (await rejectionOf(other.request("talk.client.cancelToolCall", { sessionId, callId: "x" }))).code,
    ).toBe("not_session_owner");
  });

  it("calls beyond the per-session bound are rate_limited without running", async () => {
    const { client, sessionId } = await setup();
    const running = Array.from({ length: 4 }, (_, i) =>
      rejectionOf(
        client.request("talk.client.toolCall", {
          sessionId,
          callId: `s${i}`,
          name: "slow",
          argumentsJson: "{}",
        }),
      ),
    );
    await expect.poll(() => h!.tools.slow.calls).toBe(4);
    const err = await rejectionOf(
      client.request("talk.client.toolCall", { sessionId, callId: "s4", name: "echo", argumentsJson: "{}" }),
    );
    expect(err.code).toBe("rate_limited");
    expect(err.details).toMatchObject({ limit: 4 });
    await client.request("talk.session.close", { sessionId });
    for (const r of running) expect((await r).code).toBe("cancelled");
  });
});
