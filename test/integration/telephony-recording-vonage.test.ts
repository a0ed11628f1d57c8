/**
 * Recording on a Vonage call: L16 at 16 kHz and Vonage's own playback
 * acknowledgements (notify) instead of marks, with no recording code of the
 * carrier's. The file is 16 kHz; the caller channel holds the PCM the
 * stand-in sent, the assistant channel the frames it played.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pcm16FromBytes, readWav } from "../../src/codecs/index.js";
import { recordingName, type RecordingInfo } from "../../src/voice/index.js";
import { speechAudio } from "../support/fake-openai-realtime-server.js";
import { startVonage, waitUntil, type VonageHarness } from "../support/vonage-harness.js";
import { loadSpeechPcm16k } from "../support/vonage-stream-client.js";

const speech = loadSpeechPcm16k();

let h: VonageHarness | undefined;
afterAll(async () => {
  await h?.close();
});

describe("telephony: call recording on Vonage", () => {
  it("records a Vonage call at 16 kHz: the caller's L16 as sent, the answer as played", async () => {
    const reply = speechAudio("Sure, I can help with that.", "pcm16");
    h = await startVonage({
      mode: "realtime",
      realtime: { replies: [{ audio: reply }] },
      telephony: { recording: { enabled: true } },
    });
    const { uuid, client } = await h.dial();
    const sessionId = h.sessionOf(uuid)!;
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(new Uint8Array(32_000), { pace: "fast" });
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    await client.hangUp();

    const dir = join(h.app.config.dataDir, "recordings");
    const name = recordingName("vonage", uuid);
    const info = await finished(join(dir, `${name}.json`));
    expect(info).toMatchObject({ state: "complete", sampleRate: 16_000, metadata: { carrier: "vonage" } });
    const wav = readWav(readFileSync(join(dir, `${name}.wav`)));
    expect(wav.format).toEqual({ encoding: "pcm16", sampleRate: 16_000, channels: 2 });
    const callerTrack = wav.pcm.filter((_, i) => i % 2 === 0);
    const assistantTrack = wav.pcm.filter((_, i) => i % 2 === 1);
    expect(contains(callerTrack, pcm16FromBytes(speech))).toBe(true);
    const played = client.frames.flatMap((f) => Array.from(pcm16FromBytes(f)));
    expect(played.length).toBeGreaterThan(16_000);
    expect(Array.from(assistantTrack.filter((v) => v !== 0))).toEqual(played.filter((v) => v !== 0));
  });
});

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
  for (
    let i = track.indexOf(part[0]!);
    i >= 0 && i + part.length <= track.length;
    i = track.indexOf(part[0]!, i + 1)
  ) {
    let j = 0;
    while (j < part.length && track[i + j] === part[j]) j++;
    if (j === part.length) return true;
  }
  return false;
}
