/**
 * Call recording on a real call through the Twilio stand-in (realtime
 * playback at 1x, marks echoed as played): the caller channel holds what the
 * stand-in sent, the assistant channel what it played, and a barge-in's clear
 * cuts the answer where it happened. Then the admin route and Talk API
 * methods that list and serve recordings, and a recording that cannot be
 * written (ENOSPC through /dev/full) which stops with an error event while
 * the call goes on.
 */
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import { decodeMulaw, encodeMulaw, readWav } from "../../src/codecs/index.js";
import type { RecordingEntry, RecordingInfo } from "../../src/voice/index.js";
import { speechAudio } from "../support/fake-openai-realtime-server.js";
import {
  ADMIN_TOKEN,
  sessionOfCall,
  startTelephony,
  WRITE_TOKEN,
  type TelephonyHarness,
} from "../support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const caller = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
/** What the caller says over the second answer: two seconds of a steady voiced hum (no pause ends the turn). */
const hum = encodeMulaw(Int16Array.from({ length: 16_000 }, (_, i) => Math.round(3000 * Math.sin(i / 7))));
/**
 * How far the recording's cut may be from the stand-in's, samples (0.5 s): the
 * recording places it by the clock, the stand-in plays on a 20 ms timer, and
 * both run in one loaded process. The unplayed rest is far longer (> 2 s).
 */
const CUT_TOLERANCE = 4000;
const firstReply = speechAudio("Sure, I can help with that.", "g711_ulaw");
const longReply = speechAudio(
  "Let me read you the whole list of opening hours, one day after another, slowly.",
  "g711_ulaw",
);

let h: TelephonyHarness;
let recorded: { name: string; callSid: string } | undefined;

beforeAll(async () => {
  h = await startTelephony({
    mode: "realtime",
    realtime: { replies: [{ audio: firstReply }, { audio: longReply }] },
    telephony: { recording: { enabled: true } },
  });
});
afterAll(async () => {
  await h?.close();
});

describe("telephony: call recording", () => {
  it("records the caller as sent and the assistant as played, time-aligned, with a barge-in's cut where the clear happened", async () => {
    const client = await h.dial({ playback: "realtime" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    const said = new Uint8Array(caller.length + 8000);
    said.set(caller);
    said.fill(0xff, caller.length); // a second of silence ends the caller's turn
    await client.sendAudio(said, { pace: "realtime" });
    // The first answer plays to its end.
    await waitUntil(() => playedBytes(client.played) >= firstReply.length);
    // The second is cut after about a second.
    h.realtime!.respond();
    await waitUntil(() => playedBytes(client.played) >= firstReply.length + 8000);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    // The caller talks on for two seconds after the clear: the answer's unplayed rest must not show up there.
    await client.sendAudio(hum, { pace: "realtime" });
    await client.stop();

    const name = `twilio-${client.callSid}`;
    recorded = { name, callSid: client.callSid };
    const info = await finished(name);
    expect(info).toMatchObject({ state: "complete", sessionId, sampleRate: 8000 });
    expect(info.metadata).toMatchObject({ carrier: "twilio", callSid: client.callSid });
    const wav = readWav(readFileSync(join(recordingsDir(), `${name}.wav`)));
    expect(wav.format).toEqual({ encoding: "pcm16", sampleRate: 8000, channels: 2 });
    const [callerTrack, assistantTrack] = channels(wav.pcm);

    // Channel 1: every frame the stand-in sent, sample for sample, in order.
    const sent = decodeMulaw(said);
    const callerAt = framesInOrder(callerTrack, sent);
    expect(callerAt).toBeGreaterThanOrEqual(0);

    // Channel 2: what the stand-in played, sample for sample, but for a moment at the cut (the recording
    // places it by the clock, the stand-in plays on a 20 ms timer); the answer's unplayed rest is absent.
    const received = nonZero(decodeMulaw(concat(client.media)));
    const played = nonZero(decodeMulaw(concat(client.played)));
    const inRecording = nonZero(assistantTrack);
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(2);
    expect(commonPrefix(inRecording, played)).toBe(Math.min(inRecording.length, played.length));
    expect(inRecording.length).toBeGreaterThan(nonZero(decodeMulaw(firstReply)).length);
    expect(Math.abs(inRecording.length - played.length)).toBeLessThan(CUT_TOLERANCE);
    expect(received.length - inRecording.length).toBeGreaterThan(16_000);

    // Time-aligned: the first answer starts after the caller's speech, once the stand-in's VAD heard its end.
    const speechEnd = callerAt + voicedEnd(decodeMulaw(caller));
    const answerStart = assistantTrack.findIndex((v) => v !== 0);
    expect(answerStart).toBeGreaterThan(speechEnd);
    expect(answerStart).toBeLessThan(speechEnd + 3 * 8000);
    // The cut is where the clear happened: the answer stops as the interruption starts, silent after it.
    const interruptedAt = framesInOrder(callerTrack, decodeMulaw(hum));
    expect(interruptedAt).toBeGreaterThan(answerStart);
    const cutAt = lastNonZero(assistantTrack);
    expect(Math.abs(cutAt - interruptedAt)).toBeLessThan(CUT_TOLERANCE);
    expect(h.eventsOf(sessionId, "session.updated").map((e) => e.payload)).toContainEqual({
      recording: { state: "recording", name },
    });
  });

  it("the admin route and Talk API list and serve recordings; other scopes and paths outside the directory are refused", async () => {
    expect(recorded).toBeDefined();
    const { name } = recorded!;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const list = await fetch(`${h.baseUrl}/admin/recordings`, { headers: admin });
    expect(list.status).toBe(200);
    const { recordings } = (await list.json()) as { recordings: RecordingEntry[] };
    const entry = recordings.find((r) => r.name === name)!;
    expect(entry).toMatchObject({ file: `${name}.wav`, info: { state: "complete" } });
    const file = readFileSync(join(recordingsDir(), `${name}.wav`));
    expect(entry.bytes).toBe(file.length);

    const served = await fetch(`${h.baseUrl}/admin/recordings/${name}.wav`, { headers: admin });
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("audio/wav");
    expect(Buffer.from(await served.arrayBuffer()).equals(file)).toBe(true);

    const writer = await fetch(`${h.baseUrl}/admin/recordings/${name}.wav`, {
      headers: { authorization: `Bearer ${WRITE_TOKEN}` },
    });
    expect(writer.status).toBe(403);
    expect((await fetch(`${h.baseUrl}/admin/recordings`)).status).toBe(401);
    for (const path of [
      "..%2Fsessions%2Fx.wav",
      "..%2F..%2Fetc%2Fpasswd",
      "%2Fetc%2Fpasswd.wav",
      `${name}.json`,
    ]) {
      const res = await fetch(`${h.baseUrl}/admin/recordings/${path}`, { headers: admin });
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_params");
    }
    const missing = await fetch(`${h.baseUrl}/admin/recordings/twilio-CAnone.wav`, { headers: admin });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("recording_not_found");

    // The same over the Talk API (admin.*), read back in pages.
    const talk = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: ADMIN_TOKEN });
    const listed = (await talk.requestUntyped("admin.recordings.list", {})) as {
      recordings: RecordingEntry[];
    };
    expect(listed.recordings.map((r) => r.name)).toContain(name);
    const pages: Buffer[] = [];
    for (let offset = 0; offset < file.length;) {
      const page = (await talk.requestUntyped("admin.recording.read", { name, offset, length: 65_536 })) as {
        data: string;
        bytes: number;
        totalBytes: number;
      };
      expect(page.totalBytes).toBe(file.length);
      pages.push(Buffer.from(page.data, "base64"));
      offset += page.bytes;
    }
    expect(Buffer.concat(pages).equals(file)).toBe(true);
    await expect(
      talk.requestUntyped("admin.recording.read", { name: "../sessions/x" }),
    ).rejects.toMatchObject({
      code: "invalid_params",
    });
    await talk.close();
    const writerTalk = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
    await expect(writerTalk.requestUntyped("admin.recordings.list", {})).rejects.toMatchObject({
      code: "forbidden",
    });
    await writerTalk.close();
  });

  it("a recording that cannot be written (disk full: ENOSPC) stops with a session.error and a log line; the call goes on", async () => {
    const callSid = `CA${"f".repeat(32)}`;
    symlinkSync("/dev/full", join(recordingsDir(), `twilio-${callSid}.wav`));
    const client = await h.dial({ callSid, playback: "immediate" });
    const sessionId = sessionOfCall(h, callSid)!;
    await waitUntil(() => h.eventsOf(sessionId, "session.error").length === 1);
    expect(h.eventsOf(sessionId, "session.error")[0]!.payload).toMatchObject({
      code: "recording_failed",
      retryable: false,
      details: { reason: "ENOSPC" },
    });
    expect(h.logs.some((l) => /recording stopped/.test(String(l.msg)) && l.level === 50)).toBe(true);
    // The call is unaffected: the caller is heard and answered.
    const answered = h.eventsOf(sessionId, "output.audio.done").length;
    const said = new Uint8Array(caller.length + 8000);
    said.set(caller);
    said.fill(0xff, caller.length);
    await client.sendAudio(said, { pace: "fast" });
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.done").length > answered);
    expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");
    await client.stop();
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
    const info = await finished(`twilio-${callSid}`);
    expect(info).toMatchObject({ state: "failed", error: { code: "recording_failed" } });
    expect(h.eventsOf(sessionId, "session.error")).toHaveLength(1);
  });
});

function recordingsDir(): string {
  return join(h.app.config.dataDir, "recordings");
}

/** The sidecar once the recording has ended. */
async function finished(name: string): Promise<RecordingInfo> {
  const path = join(recordingsDir(), `${name}.json`);
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

function channels(pcm: Int16Array): [Int16Array, Int16Array] {
  const a = new Int16Array(pcm.length / 2);
  const b = new Int16Array(pcm.length / 2);
  for (let i = 0; i < a.length; i++) {
    a[i] = pcm[2 * i]!;
    b[i] = pcm[2 * i + 1]!;
  }
  return [a, b];
}

/**
 * Where `sent` starts in `track`, each of its 20 ms frames found sample for
 * sample after the one before (a late frame may follow a gap of silence);
 * -1 when a frame is missing.
 */
function framesInOrder(track: Int16Array, sent: Int16Array): number {
  let at = -1;
  let from = 0;
  for (let f = 0; f < sent.length; f += 160) {
    const frame = sent.subarray(f, f + 160);
    const found = indexOf(track, frame, from);
    if (found < 0 || (at >= 0 && found !== from && !silent(track.subarray(from, found)))) return -1;
    if (at < 0) at = found;
    from = found + frame.length;
  }
  return at;
}

function indexOf(track: Int16Array, frame: Int16Array, from: number): number {
  outer: for (let i = from; i + frame.length <= track.length; i++) {
    for (let j = 0; j < frame.length; j++) if (track[i + j] !== frame[j]) continue outer;
    return i;
  }
  return -1;
}

/** End of the last 20 ms frame loud enough to be speech for the stand-in's VAD (RMS above 700). */
function voicedEnd(pcm: Int16Array): number {
  let end = 0;
  for (let f = 0; f + 160 <= pcm.length; f += 160) {
    let sum = 0;
    for (let i = f; i < f + 160; i++) sum += pcm[i]! * pcm[i]!;
    if (Math.sqrt(sum / 160) > 700) end = f + 160;
  }
  return end;
}

function commonPrefix(a: Int16Array, b: Int16Array): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

const silent = (a: Int16Array): boolean => a.every((v) => v === 0);
const nonZero = (a: Int16Array): Int16Array => a.filter((v) => v !== 0);
const lastNonZero = (a: Int16Array): number => a.findLastIndex((v) => v !== 0);
const playedBytes = (played: Uint8Array[]): number => played.reduce((n, a) => n + a.byteLength, 0);

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(playedBytes(parts));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
