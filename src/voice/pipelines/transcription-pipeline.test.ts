import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createPocketsphinxStt } from "../../providers/pocketsphinx/pocketsphinx-stt.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { PipelineProviderResolver } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog } from "./testing/pipeline-harness.js";

const GO_FORWARD = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
const stt = createPocketsphinxStt();
const providers: PipelineProviderResolver = {
  stt: () => stt,
  tts: () => undefined,
  agent: () => undefined,
  realtime: () => undefined,
};

function appendInFrames(append: (b: Uint8Array) => void, audio: Uint8Array): void {
  for (let i = 0; i < audio.byteLength; i += 640)
    append(audio.subarray(i, Math.min(i + 640, audio.byteLength)));
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

function transcriptionSession() {
  runtime = createTalkRuntime();
  return runtime.createSession({
    mode: "transcription",
    transport: "gateway-relay",
    brain: "none",
    owner: "gateway",
  });
}

describe("transcription pipeline (pocketsphinx)", () => {
  it("audio starts a turn by itself and endTurn yields the final transcript, with no output", async () => {
    const session = transcriptionSession();
    const log = new EventLog(session);
    const controller = createSessionController({ session, providers });
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    const turn = session.activeTurn!;
    expect(turn).toBeDefined();
    await controller.endTurn(turn.id);
    const done = await log.next("transcript.done");
    expect(done).toMatchObject({
      turnId: turn.id,
      final: true,
      payload: { role: "user", text: "go forward ten meters" },
    });
    expect(log.events.some((e) => e.type.startsWith("output."))).toBe(false);
    expect(controller.cancelOutput(undefined, "client_request")).toBe(false);
  });

  it("audio that arrives while a turn finalizes goes to the next turn without cancelling the first", async () => {
    const session = transcriptionSession();
    const log = new EventLog(session);
    // Held audio is bounded by heldAudioMs; the recording is 2.8 s long.
    const controller = createSessionController({ session, providers, options: { heldAudioMs: 5000 } });
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    const first = session.activeTurn!;
    const ending = controller.endTurn(first.id);
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    await ending;
    const second = session.activeTurn!;
    expect(second.id).not.toBe(first.id);
    await controller.endTurn(second.id);
    const finals = log.ofType("transcript.done");
    expect(finals.map((e) => [e.turnId, (e.payload as { text: string }).text])).toEqual([
      [first.id, "go forward ten meters"],
      [second.id, "go forward ten meters"],
    ]);
    expect(log.ofType("turn.cancelled")).toHaveLength(0);
  });

  it("silenceTimeoutMs ends the turn after speech followed by that much silence", async () => {
    const session = transcriptionSession();
    const log = new EventLog(session);
    const controller = createSessionController({ session, providers, options: { silenceTimeoutMs: 500 } });
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    // One second of digital silence: more than the timeout, in audio time.
    appendInFrames((b) => controller.appendAudio(b), new Uint8Array(32_000));
    const ended = await log.next("turn.ended");
    const done = await log.next("transcript.done");
    expect(done.turnId).toBe(ended.turnId);
    expect((done.payload as { text: string }).text).toContain("go forward");
  });

  it("cancelTurn aborts the recognizer and emits one turn.cancelled", async () => {
    const session = transcriptionSession();
    const log = new EventLog(session);
    const controller = createSessionController({ session, providers });
    appendInFrames((b) => controller.appendAudio(b), GO_FORWARD);
    expect(controller.cancelTurn(undefined, "client_request")).toBe(true);
    await controller.close("test-done");
    expect(log.ofType("turn.cancelled")).toHaveLength(1);
    expect(log.ofType("transcript.done")).toHaveLength(0);
    expect(session.stats.pendingWork).toBe(0);
  });
});
