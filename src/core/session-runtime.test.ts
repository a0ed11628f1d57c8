import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createTalkRuntime } from "./session-runtime.js";
import type { TalkRuntime } from "./session-types.js";
import type { TalkEvent } from "./talk-events.js";
import { PCM16_16K } from "./talk-types.js";
// The model keeps no files; the voice engine's store is what the composition root gives it.
import { sessionLogFiles } from "../voice/recording/session-log.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function runtime(options: Parameters<typeof createTalkRuntime>[0] = {}): TalkRuntime {
  const r = createTalkRuntime(options);
  cleanups.push(() => r.close());
  return r;
}

/** performance.now() under the test's control (the replay rings' age clock), real again after the test. */
function fakePerformanceClock(): void {
  vi.useFakeTimers({ toFake: ["performance"] });
  cleanups.push(() => {
    vi.useRealTimers();
  });
}

const relay = {
  mode: "realtime",
  transport: "gateway-relay",
  brain: "agent-consult",
  owner: "gateway",
} as const;

/** A relay session with 300 events, on a fake performance clock (the replay ring's age is measured on it). */
function sessionOf300Events(options: Parameters<typeof createTalkRuntime>[0] = {}) {
  fakePerformanceClock();
  const s = runtime(options).createSession(relay);
  for (let i = 0; i < 300; i++) s.emit({ type: "health.changed", payload: {} });
  return s;
}

describe("createTalkRuntime", () => {
  it("rejects invalid options with config_invalid at construction", () => {
    expect(() => createTalkRuntime({ replayLimit: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createTalkRuntime({ maxSessions: 1.5 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createTalkRuntime({ closedRetentionMs: -1 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createTalkRuntime({ replayMaxAgeMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => sessionLogFiles({ dataDir: tmpdir(), flushIntervalMs: -1 })).toThrow(
      expect.objectContaining({
        code: "config_invalid",
        message: expect.stringContaining("sessionLogFlushMs"),
      }),
    );
  });

  it("bounds each session's replay ring in age (runtime.replayMaxAgeMs), keeping its newest 100 events", () => {
    const s = sessionOf300Events({ replayMaxAgeMs: 60_000 });
    expect(s.replay(0).complete).toBe(true);
    vi.advanceTimersByTime(61_000);
    s.emit({ type: "health.changed", payload: {} });
    const kept = s.replay(0);
    expect(kept.complete).toBe(false);
    expect(kept.events).toHaveLength(100);
    expect(kept.events.at(-1)!.seq).toBe(s.replay(0).events.at(-1)!.seq);
  });

  it("keeps 30 s of events beyond the newest 100 by default (every relayed call's ring is old-generation heap)", () => {
    const s = sessionOf300Events();
    vi.advanceTimersByTime(29_000);
    s.emit({ type: "health.changed", payload: {} });
    expect(s.replay(0).complete).toBe(true);
    vi.advanceTimersByTime(2_000);
    s.emit({ type: "health.changed", payload: {} });
    const kept = s.replay(0);
    expect(kept.complete).toBe(false);
    expect(kept.events).toHaveLength(100);
  });

  it("rejects a data dir that cannot be used with config_invalid", () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-rt-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "file");
    writeFileSync(file, "");
    expect(() => sessionLogFiles({ dataDir: file })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("creates only combinations of the creation matrix and points clients to the right method", () => {
    const r = runtime();
    expect(() => r.createSession({ ...relay, brain: "none" })).toThrow(
      expect.objectContaining({ code: "unsupported_combination" }),
    );
    expect(() =>
      r.createSession({ mode: "realtime", transport: "webrtc", brain: "agent-consult", owner: "gateway" }),
    ).toThrow(expect.objectContaining({ code: "use_talk_client_create" }));
    expect(() => r.createSession({ ...relay, owner: "client" })).toThrow(
      expect.objectContaining({ code: "use_talk_session_create" }),
    );
    expect(() => r.createSession({ ...relay, mode: "bogus" as never })).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
    expect(
      r.createSession({ mode: "realtime", transport: "webrtc", brain: "agent-consult", owner: "client" })
        .owner,
    ).toBe("client");
  });

  it("enforces maxSessions with session_limit and frees the slot on close", async () => {
    const r = runtime({ maxSessions: 1 });
    const s = r.createSession(relay);
    expect(() => r.createSession(relay)).toThrow(expect.objectContaining({ code: "session_limit" }));
    await s.close("client_request");
    expect(r.sessionCount).toBe(0);
    expect(r.createSession(relay).state).toBe("active");
  });

  it("keeps seq independent per session and fans every event out to subscribeAll", () => {
    const r = runtime();
    const all: TalkEvent[] = [];
    r.subscribeAll((e) => all.push(e));
    const a = r.createSession(relay);
    const b = r.createSession(relay);
    a.emit({ type: "health.changed", payload: {} });
    a.emit({ type: "health.changed", payload: {} });
    b.emit({ type: "health.changed", payload: {} });
    expect(all.filter((e) => e.sessionId === a.id).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(all.filter((e) => e.sessionId === b.id).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("hands subscribeAll listeners each event's JSON line, the one the session serialized", () => {
    const r = runtime();
    const seen: { event: TalkEvent; line: string | undefined }[] = [];
    r.subscribeAll((event, line) => seen.push({ event, line }));
    const a = r.createSession(relay);
    a.emit({ type: "health.changed", payload: { detail: 'quoted "x", ünïcode' } });
    expect(seen.length).toBeGreaterThan(1);
    for (const { event, line } of seen) expect(line).toBe(JSON.stringify(event));
  });

  it("keeps a closed session readable for replay during retention, and requireSession says it is closed", async () => {
    const r = runtime({ closedRetentionMs: 60_000 });
    const s = r.createSession(relay);
    await s.close("client_request");
    expect(r.getSession(s.id)).toBe(s);
    expect(r.getSession(s.id)?.replay(0).events.at(-1)?.type).toBe("session.closed");
    expect(() => r.requireSession(s.id)).toThrow(expect.objectContaining({ code: "session_closed" }));
    expect(() => r.requireSession("missing")).toThrow(expect.objectContaining({ code: "session_not_found" }));
    expect(r.listSessions()).toHaveLength(0);
  });

  it("forgets a closed session immediately with zero retention", async () => {
    const r = runtime({ closedRetentionMs: 0 });
    const s = r.createSession(relay);
    await s.close("client_request");
    expect(r.getSession(s.id)).toBeUndefined();
  });

  it("close() closes every session, is idempotent, and refuses new sessions", async () => {
    const r = createTalkRuntime();
    const s = r.createSession(relay);
    const closing = r.close();
    expect(r.close()).toBe(closing);
    await closing;
    expect(s.state).toBe("closed");
    expect(() => r.createSession(relay)).toThrow(expect.objectContaining({ code: "shutting_down" }));
  });

  it("appends each session's events, one JSON line each and no audio, to sessions/<id>.jsonl", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "talkgate-rt-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const r = runtime({ sessionLogs: sessionLogFiles({ dataDir }) });
    const s = r.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "direct-tools",
      owner: "gateway",
    });
    const turn = s.startTurn();
    s.beginOutput({ itemId: "i1" });
    const delta = { format: { ...PCM16_16K }, bytes: 640, durationMs: 20 };
    s.emit({ type: "output.audio.delta", turnId: turn.id, itemId: "i1", payload: delta });
    const withAudio = { ...delta, data: new Uint8Array(640) };
    expect(() => s.emit({ type: "output.audio.delta", turnId: turn.id, payload: withAudio })).toThrow();
    await s.close("completed");
    const lines = readFileSync(join(dataDir, "sessions", `${s.id}.jsonl`), "utf8")
      .trimEnd()
      .split("\n");
    const logged = lines.map((l) => JSON.parse(l) as TalkEvent);
    expect(logged.map((e) => e.seq)).toEqual(s.replay(0).events.map((e) => e.seq));
    expect(logged.map((e) => e.type)).toEqual([
      "session.created",
      "turn.started",
      "output.audio.delta",
      "turn.cancelled",
      "session.closed",
    ]);
    expect(logged[2]?.payload).toEqual(delta);
  });

  it("batches a session's log lines (sessionLogFlushMs, default 1000 ms) until the session closes; 0 writes each at once", async () => {
    for (const sessionLogFlushMs of [undefined, 0]) {
      const dataDir = mkdtempSync(join(tmpdir(), "talkgate-rt-"));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const r = runtime({
        sessionLogs: sessionLogFiles({
          dataDir,
          ...(sessionLogFlushMs !== undefined ? { flushIntervalMs: sessionLogFlushMs } : {}),
        }),
      });
      const s = r.createSession(relay);
      s.emit({ type: "health.changed", payload: {} });
      const path = join(dataDir, "sessions", `${s.id}.jsonl`);
      const types = () =>
        readFileSync(path, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as TalkEvent).type);
      expect(types()).toEqual(sessionLogFlushMs === 0 ? ["session.created", "health.changed"] : []);
      await s.close("completed");
      expect(types()).toEqual(["session.created", "health.changed", "session.closed"]);
    }
  });
});
