import { afterEach, describe, expect, it } from "vitest";
import type { TalkEvent, ToolErrorPayload } from "../../src/core/talk-events.js";
import { SlowAgentProvider } from "../support/gateway-slow-providers.js";
import {
  SPEECH_FORMAT,
  appendPcm,
  recordEvents,
  rejectionOf,
  speechPcm,
  startGateway,
} from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

/**
 * The direct-tools brain over the real Talk API (seed 000: "a trusted
 * first-party surface can call selected tools directly through Gateway
 * policy. Keep this privileged."): creating such a session and calling its
 * tools need the direct-tools scope (or admin); a turn is answered by the
 * named tool under policy, its result read and heard, and no agent is asked.
 */

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const DIRECT = {
  mode: "stt-tts",
  transport: "managed-room",
  brain: "direct-tools",
  inputFormat: SPEECH_FORMAT,
} as const;

const ofTurn = (events: TalkEvent[], turnId: string, type?: string) =>
  events.filter((e) => e.turnId === turnId && (type === undefined || e.type === type));

describe("direct-tools sessions over the Talk API", () => {
  it("need the direct-tools scope or admin to be created: a write token gets forbidden and no session", async () => {
    h = await startGateway({ directTools: { allow: ["echo"] } });
    const writer = await h.connect({ as: "writer" });
    const err = await rejectionOf(writer.request("talk.session.create", DIRECT));
    expect(err.code).toBe("forbidden");
    expect(err.details).toMatchObject({ scope: "direct-tools", brain: "direct-tools" });
    expect(h.runtime.sessionCount).toBe(0);
    // The same token still creates the agent-consult room.
    const consult = await writer.request("talk.session.create", { ...DIRECT, brain: "agent-consult" });
    expect(consult.brain).toBe("agent-consult");

    for (const as of ["surface", "admin"] as const) {
      const client = await h.connect({ as });
      const created = await client.request("talk.session.create", DIRECT);
      expect(created).toMatchObject({ brain: "direct-tools", joinToken: expect.any(String) });
      expect(h.runtime.getSession(created.sessionId)?.brain).toBe("direct-tools");
    }
  });

  it("a spoken turn ends with its transcript, no agent answers it, and the surface's tool call answers it aloud", async () => {
    const agent = new SlowAgentProvider();
    h = await startGateway({ agent, directTools: { allow: ["echo"] } });
    const client = await h.connect({ as: "surface" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", DIRECT);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await appendPcm(client, sessionId, await speechPcm("What time is it?"));
    await client.request("talk.session.endTurn", { sessionId, turnId });
    const transcript = await rec.next((e) => e.type === "transcript.done" && e.turnId === turnId);
    expect((transcript.payload as { role: string }).role).toBe("user");

    const result = await client.request("talk.session.callTool", {
      sessionId,
      turnId,
      name: "echo",
      argumentsJson: JSON.stringify({ text: "The tool answered." }),
    });
    expect(result).toMatchObject({ sessionId, turnId, callId: expect.any(String) });
    expect(JSON.parse(result.output)).toEqual({ text: "The tool answered." });
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === turnId);

    const call = ofTurn(rec.events, turnId, "tool.call");
    expect(call).toHaveLength(1);
    expect(call[0]).toMatchObject({ callId: result.callId, payload: { name: "echo" } });
    expect(ofTurn(rec.events, turnId, "tool.result")[0]).toMatchObject({
      callId: result.callId,
      payload: { output: result.output },
    });
    // Read: the result's words, not its JSON. Heard: audio of this turn, its TTS job under the call.
    const said = ofTurn(rec.events, turnId, "output.text.done");
    expect(said.map((e) => (e.payload as { text: string }).text)).toEqual(["The tool answered."]);
    const audioEvents = ofTurn(rec.events, turnId).filter((e) => e.type.startsWith("output.audio."));
    expect(audioEvents.length).toBeGreaterThan(0);
    expect(audioEvents.every((e) => e.parentId === result.callId)).toBe(true);
    const heard = rec.audio.filter((a) => a.turnId === turnId);
    expect(heard.reduce((n, a) => n + Buffer.from(a.audioBase64, "base64").byteLength, 0)).toBeGreaterThan(
      1000,
    );
    // Nothing of the turn was said before the tool's result, and the agent was never asked.
    const resultSeq = ofTurn(rec.events, turnId, "tool.result")[0]!.seq;
    expect(
      ofTurn(rec.events, turnId).filter((e) => e.type.startsWith("output.") && e.seq < resultSeq),
    ).toEqual([]);
    expect(agent.calls).toBe(0);
  });

  it("a call with no turn opens a turn of its own, answered the same way", async () => {
    h = await startGateway({ directTools: { allow: ["echo"] } });
    const client = await h.connect({ as: "admin" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", DIRECT);
    const result = await client.request("talk.session.callTool", {
      sessionId,
      name: "echo",
      argumentsJson: '{"text":"Ready."}',
    });
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === result.turnId);
    expect(ofTurn(rec.events, result.turnId, "turn.started")).toHaveLength(1);
    expect(ofTurn(rec.events, result.turnId, "output.text.done")[0]?.payload).toMatchObject({
      text: "Ready.",
    });
  });

  it("refusals are tool.error events with stable codes and the session goes on: policy, unknown tool, bad arguments", async () => {
    h = await startGateway({
      // agent_consult and missing_tool pass the general policy; the direct selection decides.
      allowTools: ["agent_consult", "missing_tool"],
      directTools: { allow: ["echo", "shell", "agent_consult", "missing_tool"] },
    });
    const client = await h.connect({ as: "surface" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", DIRECT);
    const cases = [
      // Denied by agent.tools (deny: shell) though the direct selection names it.
      { name: "shell", argumentsJson: "{}", code: "tool_denied" },
      // Allowed in general, not selected for direct calls.
      { name: "slow", argumentsJson: "{}", code: "tool_denied" },
      // Never a direct tool: it would put an agent into the turn.
      { name: "agent_consult", argumentsJson: '{"request":"hi"}', code: "tool_denied" },
      { name: "missing_tool", argumentsJson: "{}", code: "tool_not_found" },
      { name: "echo", argumentsJson: "not json", code: "invalid_params" },
      { name: "echo", argumentsJson: "[1, 2]", code: "invalid_params" },
    ];
    const seen = new Set<string>();
    for (const c of cases) {
      const err = await rejectionOf(
        client.request("talk.session.callTool", { sessionId, name: c.name, argumentsJson: c.argumentsJson }),
      );
      expect(err.code, c.name).toBe(c.code);
      const failed = await rec.next(
        (e) => e.type === "tool.error" && (e.payload as ToolErrorPayload).name === c.name && !seen.has(e.id),
      );
      seen.add(failed.id);
      expect((failed.payload as ToolErrorPayload).code, c.name).toBe(c.code);
    }
    // Nothing refused was said, and the session still answers a good call.
    expect(rec.events.filter((e) => e.type === "output.text.done")).toEqual([]);
    const ok = await client.request("talk.session.callTool", {
      sessionId,
      name: "echo",
      argumentsJson: "{}",
    });
    expect(ok.output).toBe("{}");
    expect(h.runtime.getSession(sessionId)?.state).toBe("active");
  });

  it("a write token that joined the session cannot call its tools, and other sessions have no direct calls", async () => {
    h = await startGateway({ directTools: { allow: ["echo"] } });
    const surface = await h.connect({ as: "surface" });
    const { sessionId, joinToken } = await surface.request("talk.session.create", DIRECT);
    const writer = await h.connect({ as: "writer" });
    await writer.request("talk.session.join", { sessionId, joinToken });
    const err = await rejectionOf(writer.request("talk.session.callTool", { sessionId, name: "echo" }));
    expect(err.code).toBe("forbidden");
    expect(err.details).toMatchObject({ scope: "direct-tools" });

    const admin = await h.connect({ as: "admin" });
    const consult = await admin.request("talk.session.create", { ...DIRECT, brain: "agent-consult" });
    const wrong = await rejectionOf(
      admin.request("talk.session.callTool", { sessionId: consult.sessionId, name: "echo" }),
    );
    expect(wrong.code).toBe("invalid_state");
    expect(wrong.details).toMatchObject({ brain: "agent-consult" });
  });

  it("a stale or still-capturing turn is refused before any tool runs; cancelTurn aborts a running call", async () => {
    h = await startGateway({ directTools: { allow: ["echo", "slow"] } });
    const client = await h.connect({ as: "surface" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", DIRECT);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    const capturing = await rejectionOf(
      client.request("talk.session.callTool", { sessionId, turnId, name: "echo" }),
    );
    expect(capturing.code).toBe("invalid_state");
    const stale = await rejectionOf(
      client.request("talk.session.callTool", { sessionId, turnId: "not-the-turn", name: "echo" }),
    );
    expect(stale.code).toBe("stale_turn");
    expect(rec.events.filter((e) => e.type.startsWith("tool."))).toEqual([]);

    const running = client.request("talk.session.callTool", { sessionId, name: "slow" });
    const call = await rec.next((e) => e.type === "tool.call");
    await h.tools.slow.started;
    await client.request("talk.session.cancelTurn", { sessionId, turnId: call.turnId!, reason: "user_stop" });
    expect((await rejectionOf(running)).code).toBe("cancelled");
    await expect.poll(() => h!.tools.slow.aborted.length).toBe(1);
    expect(rec.events.filter((e) => e.type === "tool.cancelled" && e.callId === call.callId)).toHaveLength(1);
  });
});
