/**
 * Echo-safe barge-in on a speakerphone call: the Twilio stand-in plays the
 * assistant's answer at 1x and returns it into its inbound stream through an
 * echo path (120 ms, 6 dB echo return loss, a line response, u-law). With
 * talk.input.echoCancellation (the default) the caller who never speaks hears
 * the whole answer; without it the same echo interrupts the answer (the
 * false barge-in this guards against); real speech over the echo still
 * interrupts (a pocketsphinx-testdata recording raised 10 dB, about the
 * level of the assistant's audio: 6 dB above its echo; a caller quieter than
 * their own loudspeaker's echo is not heard over it while the answer plays).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoCancellerAvailable } from "../../src/codecs/echo-canceller.js";
import { validateConfig } from "../../src/config/load-config.js";
import { speakerphoneCall } from "../support/speakerphone-call.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

const GREETING = "Thank you for calling the test line, this answer is long enough to be heard. ".repeat(2);
const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);

/** One speakerphone call (120 ms, 6 dB): the answer (the greeting) plays, echoed back, with `caller` speaking at `atMs`. */
async function call(h: TelephonyHarness, caller?: { atMs: number }) {
  const r = await speakerphoneCall(h, {
    caller: caller ? { ulaw: speech, atMs: caller.atMs, gainDb: 10 } : undefined,
    timeoutMs: 30_000,
  });
  return {
    client: r.client,
    done: r.of("output.audio.done"),
    cancelled: r.of("output.audio.cancelled"),
    turnCancelled: r.of("turn.cancelled"),
  };
}

const telephony = { greeting: GREETING, greetingProtectMs: 0 };

describe.skipIf(!echoCancellerAvailable())("telephony: echo-safe barge-in (speakerphone)", () => {
  describe("echo cancellation on (the default)", () => {
    let h: TelephonyHarness;
    beforeAll(async () => {
      h = await startTelephony({ mode: "stt-tts", telephony });
    });
    afterAll(() => h.close());

    it("the caller never speaks: the whole answer plays, nothing is cancelled", async () => {
      const r = await call(h);
      expect(r.cancelled).toHaveLength(0);
      expect(r.turnCancelled).toHaveLength(0);
      expect(r.client.clears).toBe(0);
      expect(r.done).toHaveLength(1);
      expect(r.client.receivedAudioMs).toBeGreaterThan(3000);
    }, 40_000);

    it("real speech over the echo interrupts: the line is cleared", async () => {
      const r = await call(h, { atMs: 1500 });
      expect(r.client.clears).toBeGreaterThanOrEqual(1);
      expect(r.cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
      expect(r.done).toHaveLength(0);
    }, 40_000);
  });

  describe("echo cancellation off", () => {
    let h: TelephonyHarness;
    beforeAll(async () => {
      h = await startTelephony({
        mode: "stt-tts",
        telephony,
        talk: { input: { echoCancellation: { enabled: false } } },
      });
    });
    afterAll(() => h.close());

    it("the same call: the echo alone interrupts the answer (a false barge-in)", async () => {
      const r = await call(h);
      expect(r.client.clears).toBeGreaterThanOrEqual(1);
      expect(r.cancelled[0]?.payload).toMatchObject({ reason: "barge_in" });
    }, 40_000);
  });
});

describe("talk.input.echoCancellation", () => {
  it.each([
    [{ tailMs: 10 }, "tailMs"],
    [{ tailMs: 1001 }, "tailMs"],
    [{ tailMs: 300.5 }, "tailMs"],
    [{ enabled: "yes" }, "enabled"],
    [{ denoise: 1 }, "denoise"],
    [{ delayMs: 100 }, "delayMs"],
  ])("refuses %j at start, naming the key", (echoCancellation, key) => {
    let error: unknown;
    try {
      validateConfig({ talk: { input: { echoCancellation } } });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: "config_invalid" });
    expect(String((error as Error).message)).toContain("echoCancellation");
    expect(String((error as Error).message)).toContain(key);
  });
});
