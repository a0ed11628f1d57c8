/**
 * Recording does not depend on the carrier: the same two-channel file from a
 * Telnyx call (stt-tts, frames delivered out of order and put back in order),
 * with the recording notice spoken through the normal output path before the
 * greeting. Recordings older than ops.retentionDays.recordings are swept at
 * start.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decodeMulaw, readWav } from "../../src/codecs/index.js";
import { recordingName, type RecordingInfo } from "../../src/voice/index.js";
import { startTelnyx, waitUntil, type TelnyxHarness } from "../support/telnyx-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number): Uint8Array => new Uint8Array(ms * 8).fill(0xff);

let h: TelnyxHarness | undefined;
afterAll(async () => {
  await h?.close();
});

describe("telephony: call recording on Telnyx", () => {
  it("records both channels of a Telnyx call, the notice spoken first in the greeting's turn; old recordings are swept", async () => {
    // Recordings of earlier calls: one past ops.retentionDays.recordings, one within it.
    const dataDir = mkdtempSync(join(tmpdir(), "talkgate-rec-retention-"));
    const dir = join(dataDir, "recordings");
    mkdirSync(dir);
    const DAY = 86_400_000;
    for (const [name, ageDays] of [
      ["twilio-CAold", 8],
      ["twilio-CAnew", 2],
    ] as const)
      for (const ext of ["wav", "json"]) {
        const path = join(dir, `${name}.${ext}`);
        writeFileSync(path, "x");
        utimesSync(path, new Date(Date.now() - ageDays * DAY), new Date(Date.now() - ageDays * DAY));
      }
    h = await startTelnyx({
      mode: "stt-tts",
      config: { dataDir, ops: { retentionDays: { recordings: 7 } } },
      telephony: {
        greeting: "Hello.",
        recording: { enabled: true, numbers: ["+15550001111"], notice: "This call is recorded." },
      },
    });
    await waitUntil(
      () => !existsSync(join(dir, "twilio-CAold.wav")) && !existsSync(join(dir, "twilio-CAold.json")),
    );
    expect(existsSync(join(dir, "twilio-CAnew.wav")) && existsSync(join(dir, "twilio-CAnew.json"))).toBe(
      true,
    );

    const client = await h.dial();
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.eventsOf(sessionId, "output.text.done")[0]!.payload).toMatchObject({
      text: "This call is recorded. Hello.",
    });
    // The notice and greeting as heard so far (a lower bound: their last frames may still be in flight).
    const greetingHeard = nonZero(
      decodeMulaw(Uint8Array.from(client.media.flatMap((m) => Array.from(m)))),
    ).length;
    const said = new Uint8Array([...silence(300), ...speech, ...silence(1500)]);
    await client.sendAudio(said, { pace: "fast", order: "swapped" });
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 2);
    await client.stop();

    const name = recordingName("telnyx", client.callControlId);
    const info = await finished(join(dir, `${name}.json`));
    expect(info).toMatchObject({ state: "complete", sessionId, metadata: { carrier: "telnyx" } });
    const wav = readWav(readFileSync(join(dir, `${name}.wav`)));
    expect(wav.format).toEqual({ encoding: "pcm16", sampleRate: 8000, channels: 2 });
    const callerTrack = wav.pcm.filter((_, i) => i % 2 === 0);
    const assistantTrack = wav.pcm.filter((_, i) => i % 2 === 1);
    // The caller as sent, in order (the swapped frames were put back), sample for sample.
    expect(contains(callerTrack, decodeMulaw(speech))).toBe(true);
    // The assistant as played: what the stand-in received, from the start, up to where the line's clock
    // had played it when the call ended (audio sent ahead of the 1x clock and still unplayed then is
    // dropped, as after a clear): at least the notice and greeting, sample for sample.
    const heard = nonZero(decodeMulaw(Uint8Array.from(client.media.flatMap((m) => Array.from(m)))));
    const recorded = nonZero(assistantTrack);
    expect(recorded.length).toBeGreaterThanOrEqual(greetingHeard);
    expect(recorded).toEqual(heard.slice(0, recorded.length));
  });
});

function nonZero(pcm: Int16Array): number[] {
  return Array.from(pcm.filter((v) => v !== 0));
}

async function finished(path: string): Promise<RecordingInfo> {
  for (;;) {
    try {
      const info = JSON.parse(readFileSync(path, "utf8")) as RecordingInfo;
      if (info.state !== "recording") return info;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

function contains(track: Int16Array, part: Int16Array): boolean {
  const first = part[0];
  for (
    let i = track.indexOf(first!);
    i >= 0 && i + part.length <= track.length;
    i = track.indexOf(first!, i + 1)
  ) {
    let j = 0;
    while (j < part.length && track[i + j] === part[j]) j++;
    if (j === part.length) return true;
  }
  return false;
}
