/**
 * A Talk API client whose microphone hears its own speaker (issue 36): the
 * whole gateway, a real WebSocket client, the OpenAI Realtime stand-in with
 * its energy VAD standing in for server VAD. The client plays the answer it
 * is sent at 1x, reports its playback (`playback` on each appendAudio, as the
 * talk page does), and its microphone returns what it played through an echo
 * path (100 ms, 6 dB, resampled to the microphone's rate: 16 kHz, or the
 * talk page's 24 kHz), mixed with a real caller recording when the caller
 * speaks.
 *
 * The client sends no reference: the leg builds it from the audio it sent,
 * aligned by those reports (ClientReference, the phone line's LineReference).
 * Without it the provider's VAD hears the echo and the answer cuts itself.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createResampler } from "../../src/codecs/index.js";
import { echoCancellerAvailable } from "../../src/codecs/echo-canceller.js";
import type { TalkClient } from "../../src/client/talk-client.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { FakeOpenAiRealtimeServer, speechAudio } from "../support/fake-openai-realtime-server.js";
import { OPENAI_KEY, recordEvents, startGateway, type GatewayHarness } from "../support/gateway-harness.js";

const ANSWER =
  "Thank you for calling the test line. This answer is long enough to be heard over a speaker, " +
  "and it goes on for several seconds so that its echo comes back while it plays.";
/** A real caller: pocketsphinx's recording, PCM16 16 kHz mono. */
const CALLER = new Int16Array(
  new Uint8Array(readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw")).buffer,
);

const OUT_RATE = 24_000;
const FRAME_MS = 20;

let h: GatewayHarness | undefined;
let realtime: FakeOpenAiRealtimeServer | undefined;
let stopClient: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopClient?.();
  await h?.close();
  await realtime?.close();
  h = realtime = stopClient = undefined;
});

/**
 * The client's loudspeaker and microphone on one clock: every 20 ms it plays the next 20 ms of what it
 * was sent (nothing of an item once its cancellation arrived), and sends 20 ms of microphone audio: the
 * echo of what it played `delayMs` ago, `lossDb` down, plus the caller's `speech` from `atMs` on.
 */
function speakerClient(
  client: TalkClient,
  sessionId: string,
  options: {
    /** The microphone's rate (the session's input format). */
    micRate: number;
    delayMs: number;
    lossDb: number;
    /** The caller's speech at `micRate`. */
    speech?: { pcm: Int16Array; atMs: number; gain: number };
    /** No playback reports before this much of the client's clock has passed (a client slow to start them). */
    reportAfterMs?: number;
  },
) {
  const { micRate } = options;
  const queue: { itemId: string; pcm: Int16Array; at: number }[] = [];
  const played = new Map<string, number>();
  const cancelled = new Set<string>();
  let current: string | undefined;
  client.on("talk.audio", (a) => {
    if (a.sessionId !== sessionId || cancelled.has(a.itemId)) return;
    const bytes = Buffer.from(a.audioBase64, "base64");
    const pcm = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    queue.push({ itemId: a.itemId, pcm, at: 0 });
  });
  client.on("talk.event", (e: TalkEvent) => {
    // A client stops its playback on the terminal event (docs/api.md).
    if (e.type !== "output.audio.cancelled" && e.type !== "turn.cancelled") return;
    for (const q of queue) if (q.itemId === e.itemId || e.type === "turn.cancelled") cancelled.add(q.itemId);
    if (e.itemId) cancelled.add(e.itemId);
    for (let i = queue.length - 1; i >= 0; i--) if (cancelled.has(queue[i]!.itemId)) queue.splice(i, 1);
  });
  const resampler = createResampler({ from: OUT_RATE, to: micRate, channels: 1 });
  const gain = 10 ** (-options.lossDb / 20);
  // The echo path: the loudspeaker's output at the microphone's rate, behind the path's delay.
  const path: number[] = new Array<number>((micRate * options.delayMs) / 1000).fill(0);
  const outFrame = (OUT_RATE * FRAME_MS) / 1000;
  const micFrame = (micRate * FRAME_MS) / 1000;
  let frames = 0;
  let stopped = false;
  const sent: Promise<unknown>[] = [];

  const tick = (): void => {
    // The loudspeaker: the next 20 ms (silence when nothing is queued).
    const out = new Int16Array(outFrame);
    let filled = 0;
    while (filled < outFrame && queue.length > 0) {
      const head = queue[0]!;
      const n = Math.min(outFrame - filled, head.pcm.length - head.at);
      out.set(head.pcm.subarray(head.at, head.at + n), filled);
      filled += n;
      head.at += n;
      current = head.itemId;
      played.set(head.itemId, (played.get(head.itemId) ?? 0) + (n / OUT_RATE) * 1000);
      if (head.at >= head.pcm.length) queue.shift();
    }
    for (const s of resampler.process(out)) path.push(s * gain);
    // The microphone: the echo plus the caller.
    const mic = new Int16Array(micFrame);
    const speech = options.speech;
    const at = frames * micFrame;
    for (let i = 0; i < micFrame; i++) {
      let v = path.shift() ?? 0;
      if (speech) {
        const k = at + i - (speech.atMs * micRate) / 1000;
        if (k >= 0 && k < speech.pcm.length) v += speech.pcm[k]! * speech.gain;
      }
      mic[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
    }
    frames++;
    const reporting = frames * FRAME_MS >= (options.reportAfterMs ?? 0);
    const playback =
      current !== undefined && reporting
        ? { itemId: current, playedMs: Math.floor(played.get(current)!) }
        : undefined;
    sent.push(
      client
        .request("talk.session.appendAudio", {
          sessionId,
          audioBase64: Buffer.from(mic.buffer).toString("base64"),
          ...(playback ? { playback } : {}),
        })
        .catch(() => {}),
    );
  };
  const started = performance.now();
  const loop = (async () => {
    while (!stopped) {
      // Every frame due by now: a late timer sends a burst, as a device's buffered microphone would.
      do tick();
      while (started + frames * FRAME_MS <= performance.now());
      await new Promise((r) => setTimeout(r, Math.max(0, started + frames * FRAME_MS - performance.now())));
    }
  })();
  return {
    playedMs: (itemId: string) => played.get(itemId) ?? 0,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(sent);
      resampler.close();
    },
  };
}

/** The caller's recording at `rate`. */
function callerAt(rate: number): Int16Array {
  if (rate === 16_000) return CALLER;
  const resampler = createResampler({ from: 16_000, to: rate, channels: 1 });
  const head = resampler.process(CALLER);
  const tail = resampler.flush();
  resampler.close();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

async function speakerCall(
  speech?: { atMs: number },
  micRate = 16_000,
  client: {
    playbackReports?: boolean;
    reportAfterMs?: number;
    lossDb?: number;
    deltaIntervalMs?: number;
  } = {},
) {
  const audio = speechAudio(ANSWER, "pcm16");
  // Streamed at twice real time by default, as the service streams an answer: until a client's first playback
  // report the Gateway counts sent audio as played (client-playback.ts) unless the client declared its reports,
  // so an answer sent whole in a millisecond was done before this client's first report whenever its process
  // was slow to send one (seen in full runs).
  const deltaIntervalMs = client.deltaIntervalMs ?? 50;
  realtime = new FakeOpenAiRealtimeServer({
    apiKey: OPENAI_KEY,
    replies: [
      { audio, transcript: ANSWER, deltaIntervalMs },
      { audio, transcript: ANSWER, deltaIntervalMs },
    ],
  });
  const realtimeUrl = await realtime.start();
  h = await startGateway({ realtimeUrl });
  const talk = await h.connect({ as: "writer" });
  const rec = recordEvents(talk);
  const { sessionId } = await talk.request("talk.session.create", {
    mode: "realtime",
    transport: "gateway-relay",
    ...(micRate !== 16_000 ? { inputFormat: { encoding: "pcm16", sampleRate: micRate, channels: 1 } } : {}),
    ...(client.playbackReports !== undefined ? { playbackReports: client.playbackReports } : {}),
  });
  await realtime.waitFor((e) => e.type === "session.update");
  const speaker = speakerClient(talk, sessionId, {
    micRate,
    delayMs: 100,
    lossDb: client.lossDb ?? 6,
    ...(client.reportAfterMs !== undefined ? { reportAfterMs: client.reportAfterMs } : {}),
    ...(speech ? { speech: { pcm: callerAt(micRate), atMs: speech.atMs, gain: 2 } } : {}),
  });
  stopClient = () => speaker.stop();
  realtime.respond();
  const started = await rec.next((e) => e.type === "output.audio.started");
  const itemId = started.itemId!;
  const end = await rec.next(
    (e) =>
      (e.itemId === itemId && (e.type === "output.audio.done" || e.type === "output.audio.cancelled")) ||
      (e.type === "turn.cancelled" && e.turnId === started.turnId),
  );
  return { rec, itemId, end, speaker, answerMs: audio.byteLength / 48, realtime };
}

/** 16 kHz (a native client), 24 kHz (the talk page: a realtime provider's own rate). */
const MIC_RATES = [16_000, 24_000];

describe.skipIf(!echoCancellerAvailable())("a Talk API client whose microphone hears its speaker", () => {
  describe.each(MIC_RATES)("its microphone at %i Hz", (micRate) => {
    it("the caller never speaks: the whole answer plays, its echo interrupts nothing", async () => {
      const { rec, itemId, end, speaker, answerMs, realtime } = await speakerCall(undefined, micRate);
      expect(end.type).toBe("output.audio.done");
      expect(
        rec.events.filter((e) => e.type === "output.audio.cancelled" || e.type === "turn.cancelled"),
      ).toEqual([]);
      expect(realtime.received.some((e) => e.type === "response.cancel")).toBe(false);
      // The client played the whole answer (done waits for its playback reports).
      expect(speaker.playedMs(itemId)).toBeGreaterThan(answerMs - 200);
    }, 60_000);

    it("a caller speaking over the echo still interrupts the answer: one barge_in terminal event", async () => {
      const { rec, itemId, end, speaker, answerMs } = await speakerCall({ atMs: 2500 }, micRate);
      expect(["output.audio.cancelled", "turn.cancelled"]).toContain(end.type);
      expect(end.payload).toMatchObject({ reason: "barge_in" });
      // Cut once the caller spoke (2.5 s into the client's stream), not by the echo before, nor at the end.
      expect(speaker.playedMs(itemId)).toBeGreaterThan(1500);
      expect(speaker.playedMs(itemId)).toBeLessThan(answerMs - 1000);
      expect(rec.events.filter((e) => e.itemId === itemId && e.type === "output.audio.done")).toEqual([]);
    }, 60_000);
  });

  it("a client that declared its playback reports: an answer sent whole at once is done when it has played, though its first report comes a second late", async () => {
    // No echo (the path 120 dB down): only the Gateway's count of what played is under test.
    const { end, speaker, itemId, answerMs } = await speakerCall(undefined, 16_000, {
      playbackReports: true,
      reportAfterMs: 1000,
      lossDb: 120,
      deltaIntervalMs: 0,
    });
    expect(end.type).toBe("output.audio.done");
    // Without the declaration the whole answer counted as played when sent: done came before the client's
    // first report with 40 ms played (measured), output.audio.done being the last event of an answer.
    expect(speaker.playedMs(itemId)).toBeGreaterThan(answerMs - 300);
  }, 60_000);
});
