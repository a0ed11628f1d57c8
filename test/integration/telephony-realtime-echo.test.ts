/**
 * Echo-safe barge-in on a realtime (speech-to-speech) phone call: the Twilio
 * stand-in plays the provider's answer at 1x and returns it into its inbound
 * stream through a speakerphone echo path (120 ms, 6 dB echo return loss,
 * u-law). The OpenAI Realtime stand-in runs its own energy VAD on what it
 * receives (speech_started, speech_stopped, then an automatic response), as
 * server VAD does.
 *
 * Without talk.input.echoCancellation.realtime the caller's u-law passes
 * through, the provider's VAD hears the echo and the relay cuts the answer
 * (the false barge-in this guards against). With it the leg cancels the echo
 * against the playout's reference, the provider hears the cleaned PCM, and
 * the leg's gate, not the provider's speech_started, decides: the caller who
 * never speaks hears the whole answer, real speech over the echo still cuts
 * it. With talk.input.turnEnd "talkgate" the provider's turn detection is off
 * and the leg's endpoint commits the caller's audio and asks for the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoCancellerAvailable } from "../../src/codecs/echo-canceller.js";
import { validateConfig } from "../../src/config/load-config.js";
import { EchoPath, speakerphone } from "../support/echo-path.js";
import { speakerphoneCall, waitUntil } from "../support/speakerphone-call.js";
import { speechAudio } from "../support/fake-openai-realtime-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";
import { expectTalkInputRefused } from "../support/config-refusal.js";

const ANSWER =
  "Thank you for calling the test line. This answer is long enough to be heard over a speakerphone, " +
  "and it goes on for several seconds so that its echo comes back while it plays.";
const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);

/**
 * A realtime call whose greeting is the provider's long answer (u-law when it passes through, PCM 24 kHz
 * when the leg decodes), on a speakerphone line.
 */
async function harness(
  input: Record<string, unknown>,
  pcm: boolean,
  /** Hold the response after this many 100 ms deltas (it stays in progress): the stand-in's holdAfterDeltas. */
  holdAfterDeltas?: number,
  answer = ANSWER,
): Promise<TelephonyHarness> {
  const audio = speechAudio(answer, pcm ? "pcm16" : "g711_ulaw");
  return startTelephony({
    mode: "realtime",
    telephony: { greeting: "Hello.", greetingProtectMs: 0 },
    // One answer per call (the stand-in's script is shared by the harness's calls).
    realtime: {
      replies: Array.from({ length: 4 }, () => ({
        audio,
        transcript: answer,
        ...(holdAfterDeltas !== undefined ? { holdAfterDeltas } : {}),
      })),
    },
    talk: { input },
  });
}

/** One speakerphone call (120 ms, 6 dB): resolves when the answer ended, played or cut (and `until` holds, when given). */
async function call(h: TelephonyHarness, caller?: { atMs: number }, until?: (sessionId: string) => boolean) {
  const r = await speakerphoneCall(h, {
    caller: caller ? { ulaw: speech, atMs: caller.atMs, gainDb: 10 } : undefined,
    ...(until ? { until } : {}),
    timeoutMs: 30_000,
  });
  if (process.env.DEBUG_RT_ECHO)
    console.log(
      r
        .of()
        .map((e) => `${e.type} ${JSON.stringify(e.payload)}`)
        .join("\n"),
      h.realtime!.received.filter((e) => e.type !== "input_audio_buffer.append").map((e) => e.type),
    );
  return {
    client: r.client,
    done: r.of("output.audio.done"),
    cancelled: r.of("output.audio.cancelled"),
    turnCancelled: r.of("turn.cancelled"),
    events: r.of(),
  };
}

describe.skipIf(!echoCancellerAvailable())(
  "telephony: echo-safe barge-in on realtime calls (speakerphone)",
  () => {
    describe("talk.input.echoCancellation.realtime off (the default: u-law passthrough)", () => {
      let h: TelephonyHarness;
      beforeAll(async () => {
        h = await harness({}, false);
      });
      afterAll(() => h.close());

      it("the caller never speaks: the provider's VAD hears the echo and the answer is cut (a false barge-in)", async () => {
        const r = await call(h);
        expect(r.client.clears).toBeGreaterThanOrEqual(1);
        expect(r.cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
        expect(r.done).toHaveLength(0);
      }, 40_000);
    });

    describe("talk.input.echoCancellation.realtime on", () => {
      let h: TelephonyHarness;
      beforeAll(async () => {
        h = await harness({ echoCancellation: { realtime: true } }, true);
      });
      afterAll(() => h.close());

      it("the caller never speaks: the whole answer plays, nothing is cancelled", async () => {
        const r = await call(h);
        // The provider heard PCM, not the line's u-law.
        const audio = h.realtime!.session.audio as { input: { format: unknown } };
        expect(audio.input.format).toEqual({ type: "audio/pcm", rate: 24000 });
        expect(r.cancelled).toHaveLength(0);
        expect(r.turnCancelled).toHaveLength(0);
        expect(r.client.clears).toBe(0);
        expect(r.done).toHaveLength(1);
        expect(r.client.receivedAudioMs).toBeGreaterThan(5000);
        expect(h.realtime!.received.some((e) => e.type === "response.cancel")).toBe(false);
      }, 40_000);

      it("real speech over the echo interrupts: the line is cleared, the answer truncated, the caller's turn taken", async () => {
        // Until the provider, hearing the speech from its pre-roll, ends the caller's turn.
        const r = await call(h, { atMs: 1500 }, (id) => h.eventsOf(id, "turn.ended").length >= 2);
        expect(r.client.clears).toBeGreaterThanOrEqual(1);
        expect(r.cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
        // The cut answer's turn gave way to the caller's, which the provider's VAD ended.
        const turns = r.events.filter((e) => e.type === "turn.started" || e.type === "turn.ended");
        const cut = r.events.findIndex((e) => e.type === "output.audio.cancelled");
        const callerTurn = r.events.findIndex((e, i) => i > cut && e.type === "turn.started");
        expect(callerTurn).toBeGreaterThan(cut);
        expect(r.events.slice(callerTurn).map((e) => e.type)).toEqual(
          expect.arrayContaining(["input.audio.speech_started", "input.audio.speech_stopped", "turn.ended"]),
        );
        expect(turns.map((e) => e.type)).toEqual([
          "turn.started",
          "turn.ended",
          "turn.started",
          "turn.ended",
        ]);
        await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
      }, 40_000);
    });

    describe("talk.input.echoCancellation.realtime on, a response still streaming", () => {
      let h: TelephonyHarness;
      beforeAll(async () => {
        h = await harness({ echoCancellation: { realtime: true } }, true, 40);
      });
      afterAll(() => h.close());

      it("real speech over the echo cancels the provider's response (response.cancel)", async () => {
        const r = await call(h, { atMs: 1500 });
        expect(r.client.clears).toBeGreaterThanOrEqual(1);
        expect(r.cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
        await h.realtime!.waitFor((e) => e.type === "response.cancel");
      }, 40_000);
    });

    describe('talk.input.turnEnd "talkgate"', () => {
      let h: TelephonyHarness;
      beforeAll(async () => {
        h = await harness(
          { turnEnd: "talkgate", echoCancellation: { realtime: true } },
          true,
          undefined,
          "Hello.",
        );
      });
      afterAll(() => h.close());

      it("the provider's turn detection is off; after the caller's speech the leg commits and asks for the answer", async () => {
        const client = await h.dial({ playback: "realtime" });
        const sessionId = sessionOfCall(h, client.callSid)!;
        const input = (h.realtime!.session.audio as { input: { turn_detection: unknown } }).input;
        expect(input.turn_detection).toBeNull();
        // The greeting plays out first (nobody speaks over it), then the caller speaks on a quiet line.
        await waitUntil(() => h.eventsOf(sessionId, "output.audio.done").length === 1);
        const before = h.realtime!.received.length;
        const line = speakerphone(client, new EchoPath({ delayMs: 120, lossDb: 6 }), {
          ulaw: speech,
          atMs: 200,
        });
        await h.realtime!.waitFor(
          (e) => e.type === "response.create" && h.realtime!.received.indexOf(e) >= before,
        );
        await line.stop();
        const after = h.realtime!.received.slice(before).map((e) => e.type);
        const commit = after.indexOf("input_audio_buffer.commit");
        expect(commit).toBeGreaterThanOrEqual(0);
        expect(after.indexOf("response.create")).toBeGreaterThan(commit);
        // The caller's audio went to the provider before the commit; its own VAD never ran.
        expect(after.slice(0, commit)).toContain("input_audio_buffer.append");
        expect(h.events.some((e) => e.sessionId === sessionId && e.type === "turn.ended")).toBe(true);
        // Off all along: one session.update (the first), none per turn.
        expect(h.realtime!.received.filter((e) => e.type === "session.update")).toHaveLength(1);
        await client.stop();
      }, 40_000);
    });
  },
);

describe("talk.input.echoCancellation.realtime and talk.input.turnEnd", () => {
  it.each([
    [{ echoCancellation: { realtime: "yes" } }, "realtime"],
    [{ echoCancellation: { realtime: 1 } }, "realtime"],
    [{ turnEnd: "caller" }, "turnEnd"],
    [{ turnEnd: true }, "turnEnd"],
  ])("refuses %j at start, naming the key", (input, key) => expectTalkInputRefused(input, key));

  it("accepts the defaults and both turn ends", () => {
    const { config } = validateConfig({ talk: { input: {} } });
    expect(config.talk.input.echoCancellation.realtime).toBe(false);
    expect(config.talk.input.turnEnd).toBe("provider");
    const talkgate = validateConfig({ talk: { input: { turnEnd: "talkgate" } } }).config;
    expect(talkgate.talk.input.turnEnd).toBe("talkgate");
  });
});
