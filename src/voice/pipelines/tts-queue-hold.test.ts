import { afterEach, describe, expect, it } from "vitest";
import { createEspeakTts } from "../../providers/espeak-ng/espeak-tts.js";
import { NOOP_LOGGER } from "../../core/logger.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { PCM16_16K } from "../../core/talk-types.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { TtsQueue } from "./tts-queue.js";

/** A sink that says what was heard (as a phone line's marks do): `heard` ms of the item. */
class HeardSink extends RecordingSink {
  heard = 0;
  heardMs(): number {
    return this.heard;
  }
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

function answer(sink: HeardSink) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
  });
  const turn = session.startTurn();
  session.endTurn(turn.id);
  const output = session.beginOutput({ turnId: turn.id, itemId: "item-1" });
  const queue = new TtsQueue({
    session,
    tts: createEspeakTts(),
    outputFormat: PCM16_16K,
    sink: () => sink,
    turnId: turn.id,
    itemId: "item-1",
    prefetch: 1,
    logger: NOOP_LOGGER,
  });
  return { session, output, queue, log: new EventLog(session) };
}

describe("TtsQueue hold / resume", () => {
  it("hold clears the sink at the heard position; resume sends the rest from there; the answer ends once", async () => {
    const sink = new HeardSink();
    const { session, queue, log } = answer(sink);
    const playing = queue.play();
    queue.push("This answer is held and then resumed where it was heard.", { speed: 1 });
    queue.end();
    await sink.firstWrite;
    // Half of what was written so far was heard (whole ms).
    const heardMs = Math.floor(sink.bytes / 2 / 16 / 2);
    sink.heard = heardMs;
    expect(queue.hold()).toBe(true);
    expect(queue.hold()).toBe(false);
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", reason: "barge_in" });
    const before = sink.bytes;
    // Audio synthesized while held is kept, not sent.
    await new Promise((r) => setTimeout(r, 300));
    expect(sink.bytes).toBe(before);
    expect(queue.resume("backchannel")).toBe(true);
    expect(queue.resume("backchannel")).toBe(false);
    const total = await playing;
    session.endOutput("item-1");
    const heardBytes = heardMs * 16 * 2;
    // Everything after the heard position was sent again after the resume.
    expect(sink.bytes - before).toBe(total - heardBytes);
    expect(log.ofType("output.audio.paused")[0]?.payload).toEqual({ reason: "barge_in", heardMs });
    expect(log.ofType("output.audio.resumed")[0]?.payload).toEqual({
      reason: "backchannel",
      fromMs: heardMs,
    });
    expect(log.ofType("output.audio.done")).toHaveLength(1);
  }, 20_000);

  it("a held answer that is cancelled never plays on", async () => {
    const sink = new HeardSink();
    const { session, queue, log } = answer(sink);
    const playing = queue.play();
    queue.push("This answer is held and then cancelled.", { speed: 1 });
    queue.end();
    await sink.firstWrite;
    expect(queue.hold()).toBe(true);
    const before = sink.bytes;
    session.cancelOutput(undefined, "barge_in");
    await expect(playing).rejects.toMatchObject({ code: "cancelled" });
    expect(queue.resume("no_words")).toBe(false);
    expect(sink.bytes).toBe(before);
    expect(log.ofType("output.audio.done")).toHaveLength(0);
  }, 20_000);

  it("a sink that cannot say what was heard cannot hold (the onset interrupts as before)", async () => {
    const sink = new RecordingSink() as HeardSink;
    const { queue } = answer(sink);
    const playing = queue.play();
    queue.push("No position, no hold.", { speed: 1 });
    queue.end();
    await sink.firstWrite;
    expect(queue.hold()).toBe(false);
    await playing;
  }, 20_000);
});
