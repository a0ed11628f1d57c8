import { getEventListeners } from "node:events";
import { inspect } from "node:util";
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime } from "./session-runtime.js";
import type { TalkOutput, TalkRuntime, TalkSession } from "./session-types.js";
import type { OutputAudioPayload, TalkEvent } from "./talk-events.js";
import { dependantSignals } from "../../test/support/abort-traces.js";
import { warningsWhile } from "../../test/support/process-warnings.js";

const runtimes: TalkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function open(): { session: TalkSession; events: TalkEvent[] } {
  const runtime = createTalkRuntime({ closeGraceMs: 1000 });
  runtimes.push(runtime);
  const session = runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
  });
  const events: TalkEvent[] = [];
  session.subscribe((e) => events.push(e));
  return { session, events };
}

const types = (events: TalkEvent[]) => events.map((e) => e.type);

const AUDIO: OutputAudioPayload = {
  format: { encoding: "pcm16", sampleRate: 16_000, channels: 1 },
  bytes: 640,
  durationMs: 20,
};

/** Real async work: waits on a timer and stops when its signal aborts. */
function slowWork(log: { sawAbort: boolean; finished: boolean }) {
  return (signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        log.finished = true;
        resolve("done");
      }, 10_000);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          log.sawAbort = true;
          reject(signal.reason);
        },
        { once: true },
      );
    });
}

describe("TalkSession turns", () => {
  it("emits session.created first and turn.started / turn.ended with the turn id", () => {
    const { session, events } = open();
    expect(session.replay(0).events[0]?.type).toBe("session.created");
    const turn = session.startTurn();
    session.endTurn(turn.id);
    expect(types(events)).toEqual(["turn.started", "turn.ended"]);
    expect(events.every((e) => e.turnId === turn.id)).toBe(true);
    expect(session.activeTurn?.state).toBe("ending");
  });

  it("refuses a second startTurn while a turn is active", () => {
    const { session } = open();
    session.startTurn();
    expect(() => session.startTurn()).toThrow(expect.objectContaining({ code: "turn_already_active" }));
  });

  it("endTurn with a stale turnId throws stale_turn and leaves turn and capture untouched", () => {
    const { session, events } = open();
    const old = session.startTurn();
    session.endTurn(old.id);
    const current = session.startTurn();
    const capture = session.startCapture();
    const before = events.length;
    expect(() => session.endTurn(old.id)).toThrow(expect.objectContaining({ code: "stale_turn" }));
    expect(session.activeTurn?.id).toBe(current.id);
    expect(session.activeTurn?.state).toBe("active");
    expect(session.activeCapture?.id).toBe(capture.id);
    expect(events.length).toBe(before);
  });

  it("stamps the captureId on events while capture is active, and stops it at endTurn", () => {
    const { session, events } = open();
    const turn = session.startTurn();
    const capture = session.startCapture();
    session.emit({ type: "input.audio.appended", payload: { bytes: 640 } });
    session.emit({ type: "transcript.delta", turnId: turn.id, payload: { role: "user", text: "hel" } });
    session.endTurn(turn.id);
    session.emit({
      type: "transcript.done",
      turnId: turn.id,
      final: true,
      payload: { role: "user", text: "hello" },
    });
    const byType = new Map(events.map((e) => [e.type, e]));
    expect(byType.get("input.audio.appended")?.captureId).toBe(capture.id);
    expect(byType.get("transcript.delta")?.captureId).toBe(capture.id);
    expect(byType.get("capture.stopped")?.captureId).toBe(capture.id);
    expect(byType.get("transcript.done")?.captureId).toBeUndefined();
    expect(session.activeCapture).toBeUndefined();
  });

  it("lets the response of an ended turn flow, and drops output of a superseded turn", () => {
    const { session, events } = open();
    const first = session.startTurn();
    session.endTurn(first.id);
    expect(
      session.emit({ type: "output.text.delta", turnId: first.id, payload: { text: "hi" } }),
    ).toBeDefined();
    session.startTurn();
    expect(session.emit({ type: "output.audio.delta", turnId: first.id, payload: AUDIO })).toBeUndefined();
    expect(session.stats.droppedStale).toBe(1);
    expect(types(events)).not.toContain("output.audio.delta");
  });

  it("rejects turn-bound events without a turnId and lifecycle events it owns", () => {
    const { session } = open();
    expect(() => session.emit({ type: "output.audio.delta", payload: AUDIO })).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
    expect(() => session.emit({ type: "session.closed", payload: { reason: "closed" } })).toThrow(
      /emitted by the session itself/,
    );
  });

  it("lets a caller emit session.replaced and session.ready for the managed-room handover", () => {
    const { session, events } = open();
    session.emit({ type: "session.replaced", payload: { reason: "replaced" } });
    session.emit({ type: "session.ready", payload: {} });
    expect(types(events)).toEqual(["session.replaced", "session.ready"]);
  });
});

describe("TalkSession cancellation", () => {
  it("cancelTurn aborts slow work, which sees the abort and stops, and emits one turn.cancelled", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    const log = { sawAbort: false, finished: false };
    const result = session.runWork("agent-consult", slowWork(log));
    expect(session.cancelTurn(turn.id, "client_request")).toBe(true);
    expect(session.cancelTurn(turn.id, "client_request")).toBe(false);
    await expect(result).rejects.toMatchObject({ code: "cancelled" });
    expect(log).toEqual({ sawAbort: true, finished: false });
    expect(turn.signal.aborted).toBe(true);
    const cancelled = events.filter((e) => e.type === "turn.cancelled");
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]?.payload).toMatchObject({ reason: "client_request", aborted: ["agent-consult"] });
    expect(session.activeTurn).toBeUndefined();
  });

  it("emits exactly one turn.cancelled when cancelTurn races close, in either order", async () => {
    for (const order of ["cancel-first", "close-first"] as const) {
      const { session } = open();
      const turn = session.startTurn();
      const log = { sawAbort: false, finished: false };
      const work = session.runWork("tts", slowWork(log)).catch(() => undefined);
      let closing: Promise<void>;
      if (order === "cancel-first") {
        session.cancelTurn(turn.id, "barge_in");
        closing = session.close("client_request");
        session.cancelTurn(turn.id, "barge_in");
      } else {
        closing = session.close("client_request");
        expect(session.cancelTurn(turn.id, "barge_in")).toBe(false);
      }
      await closing;
      await work;
      const all = session.replay(0).events;
      expect(all.filter((e) => e.type === "turn.cancelled")).toHaveLength(1);
      expect(all.filter((e) => e.type === "session.closed")).toHaveLength(1);
      expect(all.at(-1)?.type).toBe("session.closed");
      expect(log.sawAbort).toBe(true);
    }
  });

  it("never starts work registered after the turn was cancelled", async () => {
    const { session } = open();
    const turn = session.startTurn();
    session.cancelTurn(turn.id, "client_request");
    let started = false;
    const late = session.runWork(
      "tool",
      async () => {
        started = true;
        return 1;
      },
      { turnId: turn.id },
    );
    await expect(late).rejects.toMatchObject({ code: "cancelled" });
    expect(started).toBe(false);
  });

  it("treats a result that arrives after cancellation as stale", async () => {
    const { session } = open();
    const turn = session.startTurn();
    let release!: () => void;
    const work = session.runWork(
      "stt",
      () => new Promise<string>((resolve) => (release = () => resolve("final"))),
    );
    session.cancelTurn(turn.id, "client_request");
    release();
    await expect(work).rejects.toMatchObject({ code: "cancelled" });
  });

  it("cancelOutput stops output-scoped work, keeps the turn, and drops late deltas of that item", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    session.endTurn(turn.id);
    const output = session.beginOutput({ itemId: "resp-1" });
    const log = { sawAbort: false, finished: false };
    const tts = session.runWork("tts", slowWork(log), { scope: "output" });
    expect(session.cancelOutput(undefined, "barge_in")).toBe(true);
    expect(session.cancelOutput(undefined, "barge_in")).toBe(false);
    await expect(tts).rejects.toMatchObject({ code: "cancelled" });
    expect(log.sawAbort).toBe(true);
    expect(output.signal.aborted).toBe(true);
    expect(turn.signal.aborted).toBe(false);
    expect(session.activeTurn?.id).toBe(turn.id);
    expect(
      session.emit({ type: "output.audio.delta", turnId: turn.id, itemId: "resp-1", payload: AUDIO }),
    ).toBeUndefined();
    expect(events.filter((e) => e.type === "output.audio.cancelled")).toHaveLength(1);
    await expect(session.runWork("tts", async () => 1, { scope: "output" })).rejects.toMatchObject({
      code: "cancelled",
    });
  });

  it("a cancelled turn aborts its output with the turn's reason; cancelled outputs leave no trace on the turn", () => {
    const { session } = open();
    const turn = session.startTurn();
    session.endTurn(turn.id);
    const listeners = getEventListeners(turn.signal, "abort").length;
    for (let i = 0; i < 50; i++) {
      session.beginOutput({ itemId: `cancelled-${i}` });
      session.cancelOutput(undefined, "barge_in");
    }
    expect(getEventListeners(turn.signal, "abort").length).toBe(listeners);
    expect(dependantSignals(turn.signal)).toBe(0);
    const output = session.beginOutput({ itemId: "live" });
    session.cancelTurn(turn.id, "client_request");
    expect(output.signal.aborted).toBe(true);
    expect(output.signal.reason).toBe(turn.signal.reason);
  });

  it("a turn with many outputs alive is no leak: no MaxListenersExceededWarning, each still follows the turn", async () => {
    const { session } = open();
    const turn = session.startTurn();
    session.endTurn(turn.id);
    let outputs: TalkOutput[] = [];
    const warnings = await warningsWhile(async () => {
      outputs = Array.from({ length: 20 }, (_, i) => session.beginOutput({ itemId: `item-${i}` }));
    });
    expect(warnings).not.toContain("MaxListenersExceededWarning");
    session.cancelTurn(turn.id, "client_request");
    expect(outputs.every((o) => o.signal.aborted)).toBe(true);
  });

  it("starting a new turn cancels an ended turn whose answer is still running", async () => {
    const { session, events } = open();
    const first = session.startTurn();
    session.endTurn(first.id);
    const log = { sawAbort: false, finished: false };
    const answer = session.runWork("agent-consult", slowWork(log));
    session.startTurn({ reason: "barge_in" });
    await expect(answer).rejects.toMatchObject({ code: "cancelled" });
    expect(log.sawAbort).toBe(true);
    const cancelled = events.find((e) => e.type === "turn.cancelled");
    expect(cancelled).toMatchObject({ turnId: first.id, payload: { reason: "barge_in" } });
  });

  it("keeps no trace of its past turns on the session's signal, however many a long call has", async () => {
    const { session } = open();
    const listeners = getEventListeners(session.signal, "abort").length;
    for (let i = 0; i < 300; i++) {
      const turn = session.startTurn();
      if (i % 3 === 0) session.cancelTurn(turn.id, "barge_in");
      else session.endTurn(turn.id);
    }
    const live = session.startTurn();
    // At most the live turn's link; Node's AbortSignal.any would have left one entry per turn in the set below.
    expect(getEventListeners(session.signal, "abort").length).toBeLessThanOrEqual(listeners + 1);
    expect(dependantSignals(session.signal)).toBe(0);
    const log = { sawAbort: false, finished: false };
    const work = session.runWork("agent-consult", slowWork(log), { turnId: live.id });
    await session.close("closed");
    await expect(work).rejects.toMatchObject({ code: "cancelled" });
    expect(live.signal.aborted).toBe(true);
    expect(log.sawAbort).toBe(true);
  });

  it("cancelTurn with an unknown turn id throws stale_turn", () => {
    const { session } = open();
    session.startTurn();
    expect(() => session.cancelTurn("nope", "client_request")).toThrow(
      expect.objectContaining({ code: "stale_turn" }),
    );
  });
});

describe("TalkSession close, replay and join tokens", () => {
  it("close() is idempotent: the second call returns the same promise", async () => {
    const { session } = open();
    const first = session.close("client_request");
    expect(session.close("other")).toBe(first);
    await first;
    expect(session.state).toBe("closed");
    expect(session.signal.aborted).toBe(true);
    expect(session.replay(0).events.filter((e) => e.type === "session.closed")).toHaveLength(1);
  });

  it("close() called again from inside the close (an abort listener of a child) is the same close: one session.closed", async () => {
    const { session, events } = open();
    let inner: Promise<void> | undefined;
    session.signal.addEventListener("abort", () => {
      inner = session.close("owner_lost");
    });
    const first = session.close("owner_lost");
    expect(inner).toBe(first);
    await first;
    expect(events.filter((e) => e.type === "session.closed")).toHaveLength(1);
  });

  it("verbs on a closed session reject with session_closed", async () => {
    const { session } = open();
    await session.close("client_request");
    expect(() => session.startTurn()).toThrow(expect.objectContaining({ code: "session_closed" }));
    expect(() => session.endTurn("x")).toThrow(expect.objectContaining({ code: "session_closed" }));
    expect(() => session.cancelTurn(undefined, "x")).toThrow(
      expect.objectContaining({ code: "session_closed" }),
    );
    expect(() => session.cancelOutput(undefined, "x")).toThrow(
      expect.objectContaining({ code: "session_closed" }),
    );
    expect(() => session.startCapture()).toThrow(expect.objectContaining({ code: "session_closed" }));
    expect(() => session.beginOutput()).toThrow(expect.objectContaining({ code: "session_closed" }));
    expect(() => session.issueJoinToken()).toThrow(expect.objectContaining({ code: "session_closed" }));
    await expect(session.runWork("tool", async () => 1)).rejects.toMatchObject({ code: "session_closed" });
    expect(session.emit({ type: "health.changed", payload: {} })).toBeUndefined();
    expect(session.stats.droppedClosed).toBe(1);
  });

  it("replays missed events in order, and reports incompleteness once they were evicted", () => {
    const runtime = createTalkRuntime({ replayLimit: 4 });
    runtimes.push(runtime);
    const session = runtime.createSession({
      mode: "transcription",
      transport: "gateway-relay",
      brain: "none",
      owner: "gateway",
    });
    for (let i = 0; i < 2; i++) session.emit({ type: "health.changed", payload: { i } });
    expect(session.replay(1)).toMatchObject({ complete: true, events: [{ seq: 2 }, { seq: 3 }] });
    for (let i = 0; i < 5; i++) session.emit({ type: "health.changed", payload: { i } });
    const late = session.replay(1);
    expect(late.complete).toBe(false);
    expect(late.events.map((e) => e.seq)).toEqual([5, 6, 7, 8]);
  });

  it("contains a throwing listener: other listeners still receive the event", () => {
    const { session, events } = open();
    session.subscribe(() => {
      throw new Error("listener bug");
    });
    const seen: string[] = [];
    session.subscribe((e) => seen.push(e.type));
    expect(() => session.emit({ type: "health.changed", payload: {} })).not.toThrow();
    expect(seen).toEqual(["health.changed"]);
    expect(events).toHaveLength(1);
  });

  it("join tokens verify, revoke, and never expose their hash", async () => {
    const { session } = open();
    const token = session.issueJoinToken();
    expect(session.verifyJoinToken(token)).toBe(true);
    expect(session.verifyJoinToken(`${token}x`)).toBe(false);
    expect(session.verifyJoinToken("")).toBe(false);
    const hashHex = createHash("sha256").update(token).digest("hex");
    const hashB64 = createHash("sha256").update(token).digest("base64");
    for (const view of [
      JSON.stringify(session),
      inspect(session, { depth: 5, showHidden: true }),
      JSON.stringify(session.replay(0)),
    ]) {
      expect(view).not.toContain(token);
      expect(view).not.toContain(hashHex);
      expect(view).not.toContain(hashB64);
    }
    session.revokeJoinTokens();
    expect(session.verifyJoinToken(token)).toBe(false);
    const again = session.issueJoinToken();
    await session.close("client_request");
    expect(session.verifyJoinToken(again)).toBe(false);
  });
});

describe("interruptOutput: one terminal event", () => {
  const pending = () => (signal: AbortSignal) =>
    new Promise<void>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

  it("ends the turn while its agent still runs (turn.cancelled), only the output once synthesis alone is left", async () => {
    const { session, events } = open();
    const turn = session.startTurn();
    session.endTurn(turn.id);
    session.beginOutput({ turnId: turn.id });
    const agent = session.runWork("agent-consult", pending()).catch(() => undefined);
    expect(session.interruptOutput("barge_in")).toBe(true);
    await agent;
    expect(types(events).filter((t) => t.endsWith("cancelled"))).toEqual(["turn.cancelled"]);

    const next = session.startTurn();
    session.endTurn(next.id);
    session.beginOutput({ turnId: next.id });
    const tts = session
      .runWork("tts", pending(), { turnId: next.id, scope: "output" })
      .catch(() => undefined);
    // A recognizer hearing the speech over the answer runs in the answer's turn: not the turn's own work.
    const probe = session.runWork("stt", pending()).catch(() => undefined);
    expect(session.interruptOutput("barge_in")).toBe(true);
    await tts;
    const after = events.filter((e) => e.turnId === next.id && e.type.endsWith("cancelled"));
    expect(after.map((e) => e.type)).toEqual(["output.audio.cancelled"]);
    session.cancelTurn(next.id, "client_request");
    await probe;
  });
});
