import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createEspeakTts } from "../../providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../providers/local-agent/local-agent.js";
import { createPocketsphinxStt } from "../../providers/pocketsphinx/pocketsphinx-stt.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { InputAudioPayload } from "../../core/talk-events.js";
import { PCM16_24K, ULAW_8K } from "../../core/talk-types.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "./testing/scripted-realtime-provider.js";

/** 16 kHz PCM16 speech (pocketsphinx's test recording). */
const GO_FORWARD = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const appended = (log: EventLog): InputAudioPayload[] =>
  log.ofType("input.audio.appended").map((e) => e.payload as InputAudioPayload);
const sum = (payloads: InputAudioPayload[]): number => payloads.reduce((n, p) => n + p.bytes, 0);

/** A u-law phone call relayed to a provider that takes u-law, with input.audio.appended every `intervalMs`. */
function relay(intervalMs?: number) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const provider = new ScriptedRealtimeProvider([ULAW_8K]);
  const log = new EventLog(session);
  const controller = createSessionController({
    session,
    providers: {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    },
    sink: new RecordingSink(),
    tools: undefined,
    inputFormat: ULAW_8K,
    outputFormat: ULAW_8K,
    options: intervalMs === undefined ? {} : { inputAppendedIntervalMs: intervalMs },
  });
  /** `n` 20 ms frames of caller audio, as a phone line delivers them. */
  const frames = (n: number): void => {
    for (let i = 0; i < n; i++) controller.appendAudio(new Uint8Array(160).fill(0xff));
  };
  return { session, provider, log, controller, frames };
}

describe("input.audio.appended (realtime relay)", () => {
  it("reports the audio that reached the provider once per 200 ms of it, and the rest at close", async () => {
    const { provider, log, controller, frames } = relay(200);
    await controller.ready;
    frames(9);
    expect(appended(log)).toEqual([]);
    frames(16);
    // 25 frames = 500 ms: two full 200 ms reports; the last 100 ms is pending, not lost.
    expect(appended(log)).toEqual([
      { bytes: 1600, durationMs: 200 },
      { bytes: 1600, durationMs: 200 },
    ]);
    expect(provider.audio.reduce((n, a) => n + a.byteLength, 0)).toBe(4000);
    await controller.close("completed");
    expect(appended(log).at(-1)).toEqual({ bytes: 800, durationMs: 100 });
    expect(sum(appended(log))).toBe(4000);
    // Not turn-bound: audio before any turn has no turnId.
    expect(log.ofType("input.audio.appended").every((e) => e.turnId === undefined)).toBe(true);
    const closedAt = log.types().indexOf("session.closed");
    expect(log.types().lastIndexOf("input.audio.appended")).toBeLessThan(closedAt);
  });

  it("audio held while the provider connects is reported when it is forwarded, not before", async () => {
    const { log, controller, frames } = relay(200);
    frames(20); // appended synchronously, before connect() resolved
    expect(appended(log)).toEqual([]);
    await controller.ready;
    expect(sum(appended(log))).toBe(3200);
  });

  it("audio of a turn carries its turnId, and a new turn reports the previous turn's rest first", async () => {
    const { session, provider, log, controller, frames } = relay(200);
    await controller.ready;
    provider.play({ type: "speech_started", itemId: "in_1" });
    const turnId = session.activeTurn!.id;
    frames(15); // 300 ms: one report of 200 ms in the turn, 100 ms pending
    provider.play({ type: "speech_stopped", itemId: "in_1" });
    frames(1); // between turns: the turn's rest is reported under its id first
    const events = log.ofType("input.audio.appended");
    expect(events.map((e) => [e.turnId, (e.payload as InputAudioPayload).bytes])).toEqual([
      [turnId, 1600],
      [turnId, 800],
    ]);
  });

  it("by default reports once per second of audio (a phone line sends 50 frames a second, in silence too)", async () => {
    const { log, controller, frames } = relay();
    await controller.ready;
    frames(49);
    expect(appended(log)).toEqual([]);
    frames(76); // 125 frames = 2.5 s: two full 1 s reports; the last 500 ms is pending, not lost
    expect(appended(log)).toEqual([
      { bytes: 8000, durationMs: 1000 },
      { bytes: 8000, durationMs: 1000 },
    ]);
    await controller.close("completed");
    expect(appended(log).at(-1)).toEqual({ bytes: 4000, durationMs: 500 });
    expect(sum(appended(log))).toBe(125 * 160);
  });

  it("0 reports every append", async () => {
    const { log, controller, frames } = relay(0);
    await controller.ready;
    frames(5);
    expect(appended(log)).toHaveLength(5);
  });
});

describe("input.audio.appended (speech-to-text capture)", () => {
  it("an stt-tts turn reports the audio given to the recognizer, all of it before input.audio.committed", async () => {
    runtime = createTalkRuntime();
    const session = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const stt = createPocketsphinxStt();
    const tts = createEspeakTts();
    const agent = createLocalAgent();
    const log = new EventLog(session);
    const controller = createSessionController({
      session,
      providers: { stt: () => stt, tts: () => tts, agent: () => agent, realtime: () => undefined },
      sink: new RecordingSink(),
      tools: undefined,
      outputFormat: PCM16_24K,
      options: { inputAppendedIntervalMs: 200 },
    });
    const turn = controller.startTurn();
    for (let at = 0; at < GO_FORWARD.byteLength; at += 640)
      controller.appendAudio(GO_FORWARD.subarray(at, Math.min(at + 640, GO_FORWARD.byteLength)));
    await controller.endTurn(turn.id);
    const events = log.ofType("input.audio.appended");
    // 16 kHz PCM16: 6 400 bytes per 200 ms; never one event per 20 ms frame.
    expect(events.length).toBe(Math.ceil(GO_FORWARD.byteLength / 6400));
    expect(events.slice(0, -1).every((e) => (e.payload as InputAudioPayload).bytes === 6400)).toBe(true);
    expect(events.every((e) => e.turnId === turn.id)).toBe(true);
    const committed = log.ofType("input.audio.committed")[0]!;
    expect(sum(appended(log))).toBe((committed.payload as InputAudioPayload).bytes);
    expect(log.types().lastIndexOf("input.audio.appended")).toBeLessThan(
      log.types().indexOf("input.audio.committed"),
    );
    await controller.close("completed");
  });
});
