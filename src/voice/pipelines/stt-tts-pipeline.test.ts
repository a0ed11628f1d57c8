import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { pcm16FromBytes, rms } from "../../codecs/pcm.js";
import { createEspeakTts } from "../../providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../providers/local-agent/local-agent.js";
import { createPocketsphinxStt } from "../../providers/pocketsphinx/pocketsphinx-stt.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { audioBytes } from "../../core/audio-chunk.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { OutputAudioPayload, TranscriptPayload } from "../../core/talk-events.js";
import { PCM16_24K } from "../../core/talk-types.js";
import type { PipelineProviderResolver } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";

/**
 * These tests import providers only to assemble real parts; the pipeline code
 * itself never imports src/providers.
 */
const GO_FORWARD = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");

const tts = createEspeakTts();
const stt = createPocketsphinxStt();
const agent = createLocalAgent();
const localProviders: PipelineProviderResolver = {
  stt: () => stt,
  tts: () => tts,
  agent: () => agent,
  realtime: () => undefined,
};

function appendInFrames(append: (b: Uint8Array) => void, audio: Uint8Array): void {
  for (let i = 0; i < audio.byteLength; i += 640)
    append(audio.subarray(i, Math.min(i + 640, audio.byteLength)));
}

function espeakChildren(): number {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-x", "espeak-ng"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

function sttTtsSession() {
  runtime = createTalkRuntime();
  return runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
  });
}

describe("stt-tts pipeline (espeak-ng + pocketsphinx + local agent)", () => {
  it("answers real speech: transcript, agent text, and audio in the sink in the output format", async () => {
    const session = sttTtsSession();
    const log = new EventLog(session);
    const sink = new RecordingSink();
    const controller = createSessionController({
      session,
      providers: localProviders,
      sink,
      outputFormat: PCM16_24K,
    });

    const turn = controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    await controller.endTurn(turn.id);
    const done = await log.next("output.audio.done");

    const transcript = (await log.next("transcript.done")).payload as TranscriptPayload;
    expect(transcript).toEqual({ role: "user", text: "go forward ten meters" });
    expect((await log.next("output.text.done")).payload).toEqual({ text: "You said: go forward ten meters" });
    expect(log.ofType("output.text.delta").length).toBeGreaterThan(1);

    expect(sink.writes.length).toBeGreaterThan(0);
    for (const w of sink.writes) {
      expect(w.chunk.kind).toBe("pcm");
      expect(w.chunk.format).toEqual(PCM16_24K);
      expect(w.turnId).toBe(turn.id);
    }
    const deltas = log.ofType("output.audio.delta").map((e) => e.payload as OutputAudioPayload);
    expect(deltas.reduce((n, d) => n + d.bytes, 0)).toBe(sink.bytes);
    expect((done.payload as OutputAudioPayload).bytes).toBe(sink.bytes);
    expect((done.payload as OutputAudioPayload).durationMs).toBeGreaterThan(1000);
    const audio = Buffer.concat(sink.writes.map((w) => audioBytes(w.chunk)));
    expect(rms(pcm16FromBytes(new Uint8Array(audio))) / 32768).toBeGreaterThan(0.02);

    // Events carry metadata only, and arrive in the contract's order.
    for (const e of log.events) expect(JSON.stringify(e.payload).length).toBeLessThan(1000);
    const order = log
      .types()
      .filter((t) =>
        [
          "turn.ended",
          "transcript.done",
          "output.text.done",
          "output.audio.started",
          "output.audio.done",
        ].includes(t),
      );
    expect(order).toEqual([
      "turn.ended",
      "transcript.done",
      "output.text.done",
      "output.audio.started",
      "output.audio.done",
    ]);
    expect(log.ofType("turn.cancelled")).toHaveLength(0);
  });

  it("cancelTurn during TTS stops it: one turn.cancelled, no audio after, sink cleared, no espeak left", async () => {
    const session = sttTtsSession();
    const log = new EventLog(session);
    const sink = new RecordingSink();
    const controller = createSessionController({ session, providers: localProviders, sink });

    const turn = controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    await controller.endTurn(turn.id);
    await sink.firstWrite;
    expect(controller.cancelTurn(turn.id, "client_request")).toBe(true);
    const writesAtCancel = sink.writes.length;
    expect(controller.cancelTurn(turn.id, "client_request")).toBe(false);
    await session.close("test-done"); // waits for the aborted work to settle

    expect(log.ofType("turn.cancelled")).toHaveLength(1);
    expect(log.ofType("turn.cancelled")[0]!.payload).toMatchObject({ reason: "client_request" });
    expect(log.ofType("output.audio.done")).toHaveLength(0);
    const cancelSeq = log.ofType("turn.cancelled")[0]!.seq;
    expect(log.events.filter((e) => e.type === "output.audio.delta" && e.seq > cancelSeq)).toHaveLength(0);
    expect(sink.writes.length).toBe(writesAtCancel);
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", turnId: turn.id, reason: "client_request" });
    expect(espeakChildren()).toBe(0);
  });

  it("cancelOutput stops the answer but not the session; the next turn works", async () => {
    const session = sttTtsSession();
    const log = new EventLog(session);
    const sink = new RecordingSink();
    const controller = createSessionController({ session, providers: localProviders, sink });

    const first = controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    await controller.endTurn(first.id);
    await sink.firstWrite;
    expect(controller.cancelOutput(first.id, "client_request")).toBe(true);
    expect(log.ofType("output.audio.cancelled")).toHaveLength(1);
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", turnId: first.id });

    const second = controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    await controller.endTurn(second.id);
    const done = await log.next("output.audio.done");
    expect(done.turnId).toBe(second.id);
  });

  it("rejects audio outside a turn with no_active_turn and a stale endTurn with stale_turn", async () => {
    const session = sttTtsSession();
    const controller = createSessionController({ session, providers: localProviders });
    expect(() => controller.appendAudio(GO_FORWARD.subarray(0, 640))).toThrowError(
      expect.objectContaining({ code: "no_active_turn" }),
    );
    const turn = controller.startTurn();
    await expect(controller.endTurn("not-the-turn")).rejects.toMatchObject({ code: "stale_turn" });
    expect(session.activeTurn?.id).toBe(turn.id);
    expect(() => controller.appendAudio(GO_FORWARD.subarray(0, 641))).toThrowError(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    await controller.close("test-done");
  });

  it("close() is idempotent and emits one session.closed", async () => {
    const session = sttTtsSession();
    const log = new EventLog(session);
    const controller = createSessionController({ session, providers: localProviders });
    controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD.subarray(0, 16_000));
    const a = controller.close("client_request");
    const b = controller.close("client_request");
    await Promise.all([a, b]);
    expect(log.ofType("session.closed")).toHaveLength(1);
    // The STT work settled on abort instead of being abandoned after the close grace period.
    expect(session.stats.pendingWork).toBe(0);
    expect(() => controller.appendAudio(GO_FORWARD.subarray(0, 640))).toThrowError(
      expect.objectContaining({ code: "session_closed" }),
    );
  });

  it("cancelTurn while capturing aborts the recognizer", async () => {
    const session = sttTtsSession();
    const log = new EventLog(session);
    const controller = createSessionController({ session, providers: localProviders });
    const turn = controller.startTurn();
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    expect(controller.cancelTurn(turn.id, "client_request")).toBe(true);
    await session.close("test-done");
    expect(session.stats.pendingWork).toBe(0);
    expect(log.ofType("turn.cancelled")[0]!.payload).toMatchObject({
      aborted: expect.arrayContaining(["stt", "capture"]),
    });
    expect(log.ofType("transcript.done")).toHaveLength(0);
  });

  it("a session without an STT provider fails startTurn with provider_not_found", () => {
    const session = sttTtsSession();
    const controller = createSessionController({
      session,
      providers: { ...localProviders, stt: () => undefined },
    });
    expect(() => controller.startTurn()).toThrowError(
      expect.objectContaining({ code: "provider_not_found" }),
    );
  });
});
