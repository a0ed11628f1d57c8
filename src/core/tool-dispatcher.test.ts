import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime } from "./session-runtime.js";
import type { TalkRuntime, TalkSession } from "./session-types.js";
import type { TalkEvent } from "./talk-events.js";
import { ToolDispatcher } from "./tool-dispatcher.js";
import { ToolPolicy } from "./tool-policy.js";
import { ToolRegistry } from "./tool-registry.js";
import type { ToolDefinition } from "./tool-registry.js";

const runtimes: TalkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function open(brain: "agent-consult" | "none" = "agent-consult"): {
  session: TalkSession;
  events: TalkEvent[];
} {
  const runtime = createTalkRuntime();
  runtimes.push(runtime);
  const session =
    brain === "none"
      ? runtime.createSession({ mode: "transcription", transport: "gateway-relay", brain, owner: "gateway" })
      : runtime.createSession({ mode: "realtime", transport: "gateway-relay", brain, owner: "gateway" });
  const events: TalkEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, events };
}

const toolEvents = (events: TalkEvent[]) =>
  events.filter((e) => e.type.startsWith("tool.")).map((e) => `${e.type}:${e.callId}`);

interface Probe {
  started: string[];
  sawAbort: string[];
  finished: string[];
}

/** A real slow tool: waits on a timer and stops when its signal aborts. */
function slowTool(name: string, probe: Probe, sideEffects = true): ToolDefinition {
  return {
    name,
    description: `slow ${name}`,
    parameters: { type: "object" },
    sideEffects,
    handler: (_args, ctx) =>
      new Promise<string>((resolve, reject) => {
        probe.started.push(ctx.callId);
        const timer = setTimeout(() => {
          probe.finished.push(ctx.callId);
          resolve("done");
        }, 10_000);
        ctx.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            probe.sawAbort.push(ctx.callId);
            reject(ctx.signal.reason);
          },
          { once: true },
        );
      }),
  };
}

function echoTool(calls: string[]): ToolDefinition {
  return {
    name: "echo",
    description: "Echo text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    sideEffects: false,
    handler: async (args, ctx) => {
      calls.push(ctx.callId);
      return String(args["text"]);
    },
  };
}

describe("ToolDispatcher.dispatch", () => {
  it("runs an allowed tool and emits tool.call then tool.result, correlated by callId and turnId", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    const calls: string[] = [];
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(echoTool(calls)),
      policy: new ToolPolicy(),
    });
    const outcome = await dispatcher.dispatch(session, {
      name: "echo",
      argumentsJson: '{"text":"hi"}',
      callId: "c1",
      itemId: "item-9",
    });
    expect(outcome).toEqual({ ok: true, callId: "c1", output: "hi" });
    expect(toolEvents(events)).toEqual(["tool.call:c1", "tool.result:c1"]);
    expect(
      events
        .filter((e) => e.type.startsWith("tool."))
        .every((e) => e.turnId === turn.id && e.itemId === "item-9"),
    ).toBe(true);
    expect(dispatcher.openCalls).toBe(0);
  });

  it("never runs the handler of a denied tool and reports tool_denied in tool.error", async () => {
    const { session, events } = open();
    session.startTurn();
    const calls: string[] = [];
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(echoTool(calls)),
      policy: new ToolPolicy({ allow: ["*"], deny: ["echo"] }),
    });
    const outcome = await dispatcher.dispatch(session, {
      name: "echo",
      argumentsJson: '{"text":"x"}',
      callId: "c1",
    });
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.code).toBe("tool_denied");
    expect(calls).toEqual([]);
    expect(events.find((e) => e.type === "tool.error")?.payload).toMatchObject({ code: "tool_denied" });
  });

  it("denies every tool in a session whose brain is none", async () => {
    const { session } = open("none");
    session.startTurn();
    const calls: string[] = [];
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(echoTool(calls)),
      policy: new ToolPolicy(),
    });
    const outcome = await dispatcher.dispatch(session, { name: "echo", argumentsJson: '{"text":"x"}' });
    expect(!outcome.ok && outcome.error.code).toBe("tool_denied");
    expect(calls).toEqual([]);
  });

  it("reports an unknown tool, bad arguments and a throwing handler as tool.error outcomes", async () => {
    const { session, events } = open();
    session.startTurn();
    const registry = new ToolRegistry().register(echoTool([])).register({
      name: "broken",
      description: "Always fails.",
      parameters: { type: "object" },
      sideEffects: false,
      handler: async () => {
        throw new Error("disk on fire");
      },
    });
    const dispatcher = new ToolDispatcher({ registry, policy: new ToolPolicy() });
    const codes = [];
    for (const req of [
      { name: "nope", argumentsJson: "{}" },
      { name: "echo", argumentsJson: "{}" },
      { name: "broken", argumentsJson: "{}" },
    ]) {
      const outcome = await dispatcher.dispatch(session, req);
      codes.push(!outcome.ok && outcome.error.code);
    }
    expect(codes).toEqual(["tool_not_found", "invalid_params", "internal"]);
    expect(
      events
        .filter((e) => e.type === "tool.error")
        .map((e) => (e.payload as { message: string }).message)
        .at(-1),
    ).toBe("disk on fire");
  });

  it("rejects a call on a stale turn or a closed session before emitting anything", async () => {
    const { session, events } = open();
    const old = session.startTurn();
    session.endTurn(old.id);
    session.startTurn();
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(echoTool([])),
      policy: new ToolPolicy(),
    });
    await expect(
      dispatcher.dispatch(session, { name: "echo", argumentsJson: "{}", turnId: old.id }),
    ).rejects.toMatchObject({ code: "stale_turn" });
    await session.close("client_request");
    await expect(dispatcher.dispatch(session, { name: "echo", argumentsJson: "{}" })).rejects.toMatchObject({
      code: "session_closed",
    });
    expect(toolEvents(events)).toEqual([]);
  });

  it("on cancelTurn aborts the running tool and never starts the queued one; each reports tool.cancelled once", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    const probe: Probe = { started: [], sawAbort: [], finished: [] };
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(slowTool("slow", probe)),
      policy: new ToolPolicy(),
    });
    const first = dispatcher.dispatch(session, { name: "slow", argumentsJson: "{}", callId: "running" });
    const second = dispatcher.dispatch(session, { name: "slow", argumentsJson: "{}", callId: "queued" });
    await new Promise((r) => setImmediate(r));
    expect(probe.started).toEqual(["running"]);
    session.cancelTurn(turn.id, "barge_in");
    const outcomes = await Promise.all([first, second]);
    expect(outcomes.map((o) => !o.ok && o.error.code)).toEqual(["cancelled", "cancelled"]);
    expect(probe).toEqual({ started: ["running"], sawAbort: ["running"], finished: [] });
    const cancelled = events.filter((e) => e.type === "tool.cancelled");
    expect(cancelled.map((e) => [e.callId, (e.payload as { started: boolean }).started])).toEqual([
      ["running", true],
      ["queued", false],
    ]);
    expect(cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
    expect(events.filter((e) => e.type === "tool.result" || e.type === "tool.error")).toEqual([]);
  });
});

describe("ToolDispatcher client-completed calls", () => {
  it("awaitToolResult settles with the client's submitToolResult and emits tool.result", async () => {
    const { session, events } = open();
    session.startTurn();
    const dispatcher = new ToolDispatcher({ registry: new ToolRegistry(), policy: new ToolPolicy() });
    const pending = dispatcher.awaitToolResult(session, {
      name: "lookup",
      argumentsJson: "{}",
      callId: "p1",
    });
    await new Promise((r) => setImmediate(r));
    dispatcher.submitToolResult(session.id, "p1", "42");
    expect(await pending).toEqual({ ok: true, callId: "p1", output: "42" });
    expect(toolEvents(events)).toEqual(["tool.call:p1", "tool.result:p1"]);
    expect(() => dispatcher.submitToolResult(session.id, "p1", "again")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
  });

  it("rejects submitToolResult for an unknown call, another session's call, or a server-run call", async () => {
    const { session } = open();
    session.startTurn();
    const probe: Probe = { started: [], sawAbort: [], finished: [] };
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(slowTool("slow", probe)),
      policy: new ToolPolicy(),
    });
    const awaiting = dispatcher.awaitToolResult(session, {
      name: "lookup",
      argumentsJson: "{}",
      callId: "p1",
    });
    const running = dispatcher.dispatch(session, { name: "slow", argumentsJson: "{}", callId: "s1" });
    expect(() => dispatcher.submitToolResult(session.id, "nope", "x")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
    expect(() => dispatcher.submitToolResult("other-session", "p1", "x")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
    expect(() => dispatcher.submitToolResult(session.id, "s1", "x")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
    session.cancelTurn(undefined, "client_request");
    await Promise.all([awaiting, running]);
  });

  it("a cancelled turn ends the wait with tool.cancelled and makes a late submit stale", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    const dispatcher = new ToolDispatcher({ registry: new ToolRegistry(), policy: new ToolPolicy() });
    const pending = dispatcher.awaitToolResult(session, {
      name: "lookup",
      argumentsJson: "{}",
      callId: "p1",
    });
    session.cancelTurn(turn.id, "client_request");
    const outcome = await pending;
    expect(!outcome.ok && outcome.error.code).toBe("cancelled");
    expect(() => dispatcher.submitToolResult(session.id, "p1", "late")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
    expect(toolEvents(events)).toEqual(["tool.call:p1", "tool.cancelled:p1"]);
  });

  it("checks policy for client-completed calls too", async () => {
    const { session } = open();
    session.startTurn();
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry(),
      policy: new ToolPolicy({ deny: ["hang_*"] }),
    });
    const outcome = await dispatcher.awaitToolResult(session, {
      name: "hang_up",
      argumentsJson: "{}",
      callId: "p1",
    });
    expect(!outcome.ok && outcome.error.code).toBe("tool_denied");
    expect(() => dispatcher.submitToolResult(session.id, "p1", "x")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
  });
});

describe("ToolDispatcher per-call signals", () => {
  it("cancelCall ends a call whose tool ignores its signal, with one tool.cancelled carrying the reason", async () => {
    const { session, events } = open();
    const deaf: ToolDefinition = {
      name: "deaf",
      description: "never settles, ignores its signal",
      parameters: { type: "object" },
      sideEffects: false,
      handler: () => new Promise<string>(() => {}),
    };
    const dispatcher = new ToolDispatcher({
      registry: new ToolRegistry().register(deaf),
      policy: new ToolPolicy({}),
    });
    const turn = session.ensureTurn({ source: "gateway" });
    const pending = dispatcher.dispatch(session, {
      name: "deaf",
      argumentsJson: "{}",
      callId: "c1",
      turnId: turn.id,
      parallel: true,
    });
    expect(dispatcher.cancelCall(session.id, "c1", "user_stopped")).toBe(true);
    const outcome = await pending;
    expect(outcome).toMatchObject({ ok: false, error: { code: "cancelled" } });
    expect(toolEvents(events)).toEqual(["tool.call:c1", "tool.cancelled:c1"]);
    expect(events.find((e) => e.type === "tool.cancelled")?.payload).toMatchObject({
      reason: "user_stopped",
    });
    expect(dispatcher.cancelCall(session.id, "c1")).toBe(false);
    expect(session.activeTurn?.id).toBe(turn.id);
  });

  it("cancelCall ends a call awaiting a client's result; a late submit is tool_not_found", async () => {
    const { session, events } = open();
    const dispatcher = new ToolDispatcher({ registry: new ToolRegistry(), policy: new ToolPolicy({}) });
    session.ensureTurn({ source: "gateway" });
    const pending = dispatcher.awaitToolResult(session, {
      name: "show_map",
      argumentsJson: "{}",
      callId: "m1",
    });
    expect(dispatcher.cancelCall(session.id, "m1", "provider_cancelled")).toBe(true);
    expect((await pending).ok).toBe(false);
    expect(toolEvents(events)).toEqual(["tool.call:m1", "tool.cancelled:m1"]);
    expect(() => dispatcher.submitToolResult(session.id, "m1", "late")).toThrow(
      expect.objectContaining({ code: "tool_not_found" }),
    );
  });

  it("refuses maxParallelPerSession config that is not a positive integer", () => {
    expect(
      () =>
        new ToolDispatcher({
          registry: new ToolRegistry(),
          policy: new ToolPolicy({}),
          maxParallelPerSession: 0,
        }),
    ).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});
