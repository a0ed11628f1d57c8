/**
 * stt-tts phone calls on the embedded local engines: the local speech gate
 * turns real caller speech into a turn, Moonshine (the default recognizer)
 * transcribes it, the local agent answers, espeak-ng speaks, and the answer
 * goes back as 20 ms u-law frames with marks. Caller speech during the answer
 * interrupts it.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadRecordingUlaw, loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

/** espeak-ng's "What time is it?" as u-law 8 kHz (rendered by the Debian program at test time). */
function espeakUlaw(text: string): Uint8Array {
  const wav = join(mkdtempSync(join(tmpdir(), "talkgate-espeak-")), "speech.wav");
  execFileSync("espeak-ng", ["-v", "en-us", "-w", wav, text]);
  return loadRecordingUlaw(wav);
}

/** Dials, says `said` (default "go forward ten meters") between silences, and waits for the answer to have played. */
async function sayOnceAndHearTheAnswer(
  harness: TelephonyHarness,
  said: Uint8Array = speech,
): Promise<{ client: Awaited<ReturnType<TelephonyHarness["dial"]>>; sessionId: string }> {
  const client = await harness.dial();
  await client.sendAudio(silence(300), { pace: "fast" });
  await client.sendAudio(said, { pace: "fast" });
  await client.sendAudio(silence(1500), { pace: "fast" });
  const sessionId = sessionOfCall(harness, client.callSid)!;
  await waitUntil(() => harness.eventsOf(sessionId, "output.audio.done").length === 1);
  return { client, sessionId };
}

describe("telephony: stt-tts calls", () => {
  it("a full call: speech starts and ends a turn, the caller is transcribed, the answer is spoken back as u-law with marks", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const { client, sessionId } = await sayOnceAndHearTheAnswer(h);
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((heard.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.media.every((m) => m.length > 0 && m.length % 160 === 0 && m.length <= 1600)).toBe(true);
    expect(client.marksEchoed.length).toBeGreaterThan(0);
    expect(h.eventsOf(sessionId, "turn.started").length).toBe(1); // the silence before and after started nothing
    // The line's local VAD reports the caller's speech on the turn, like a realtime provider's VAD.
    const turnId = h.eventsOf(sessionId, "turn.started")[0]!.turnId;
    const started = h.eventsOf(sessionId, "input.audio.speech_started");
    const stopped = h.eventsOf(sessionId, "input.audio.speech_stopped");
    expect(started).toMatchObject([{ turnId, source: "local_vad" }]);
    expect(stopped).toMatchObject([{ turnId, source: "local_vad" }]);
    expect((started[0]!.payload as { audioStartMs: number }).audioStartMs).toBeGreaterThanOrEqual(250);
    await client.stop();
  });

  it('the default recognizer is Moonshine: with no speech provider configured, "What time is it?" is heard word for word over the u-law line and the local agent tells the time', async () => {
    h = await startTelephony({ mode: "stt-tts" });
    expect(h.app.config.talk.provider).toBeUndefined();
    const { client, sessionId } = await sayOnceAndHearTheAnswer(h, espeakUlaw("What time is it?"));
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .filter((e) => (e.payload as { role: string }).role === "user")
      .map((e) => (e.payload as { text: string }).text);
    const answered = h
      .eventsOf(sessionId, "output.text.done")
      .map((e) => (e.payload as { text: string }).text);
    // Moonshine writes sentences with capitals and punctuation; pocketsphinx heard "not on it" here.
    expect(heard).toEqual(["What time is it?"]);
    expect(answered).toEqual([expect.stringMatching(/^It is \d{1,2}:\d{2}\s[AP]M\.$/u)]);
    await client.stop();
  });

  it("caller speech during a long answer clears the line and cancels the answer with one terminal event", async () => {
    h = await startTelephony({
      mode: "stt-tts",
      telephony: { greeting: "Welcome to the test line. ".repeat(12), greetingProtectMs: 0 },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(500);
    await client.sendAudio(speech, { pace: "fast" });
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
    expect(
      h
        .eventsOf(sessionId, "output.audio.done")
        .filter((e) => e.itemId === h!.eventsOf(sessionId, "output.audio.cancelled")[0]!.itemId),
    ).toHaveLength(0);
    await client.stop();
  });
});

describe("telephony: stt-tts greeting protection", () => {
  it("caller speech during a protected greeting neither cancels it nor supersedes its turn; once it is over, the speech is a turn of its own", async () => {
    h = await startTelephony({
      mode: "stt-tts",
      telephony: { greeting: "Welcome to the test line. ".repeat(6), greetingProtectMs: 600_000 },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    client.play(300);
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    // The caller's phone plays the rest as it arrives: the greeting is heard to its end.
    while (h.eventsOf(sessionId, "output.audio.done").length === 0) {
      client.play(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(client.clears).toBe(0);
    expect(h.eventsOf(sessionId, "turn.cancelled")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")).toHaveLength(0);
    // The speech was kept: the greeting over, it is a turn of its own, its words on that turn, not the greeting's.
    const greetingTurn = h.eventsOf(sessionId, "output.audio.done")[0]!.turnId;
    const userWords = () =>
      h!
        .eventsOf(sessionId, "transcript.done")
        .filter((e) => (e.payload as { role: string }).role === "user");
    await waitUntil(() => userWords().length > 0);
    const words = userWords()[0]!;
    expect(words.turnId).not.toBe(greetingTurn);
    expect(h.eventsOf(sessionId, "turn.started").map((e) => e.turnId)).toContain(words.turnId);
    expect((words.payload as { text: string }).text).toMatch(/forward|ten|meters/);
    expect(h.eventsOf(sessionId, "turn.cancelled")).toHaveLength(0);
    await client.stop();
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
