/**
 * A hung recognizer or synthesizer under an stt-tts phone call (issue 38,
 * point 3): the whole server on loopback, the OpenAI-compatible STT and TTS
 * stand-in accepting the request and then sending nothing, the local engines
 * as fallbacks. Timed from the end of the caller's turn (`input.audio.committed`)
 * to the first audio the caller receives (the holding line when it is on) and
 * to the answer's first audio (`output.audio.delta`), for each way of
 * replacing the hung request, side by side in one run:
 *
 * - sequential: the first try and `retries` (2) retries, each waited for
 *   `firstByteTimeoutMs` (5 s), then the fallback (main before this change);
 * - short retries: the retries wait `retryFirstByteTimeoutMs` (1.5 s);
 * - hedge: the fallback starts beside the hung request after `hedgeAfterMs`
 *   (1.5 s, the default since this measure).
 *
 *   nice -n 10 node --import tsx bench/telephony-speech-stalls.bench.ts [--rounds 3]
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { fmt, num, sleep } from "./lib/bench-args.js";
import { FakeOpenAiServer } from "../test/support/fake-openai-server.js";
import { sessionOfCall, startTelephony } from "../test/support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../test/support/twilio-stream-client.js";

const { values } = benchParseArgs(import.meta.url, { options: { rounds: { type: "string", default: "3" } } });
const rounds = num(values.rounds, "rounds");
const KEY = "sk-bench-speech-0123456789abcdef";
const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

const STRATEGIES: Record<string, Record<string, number>> = {
  sequential: { holdingAfterMs: 0, hedgeAfterMs: 0 },
  "sequential + holding line": { holdingAfterMs: 1000, hedgeAfterMs: 0 },
  "short retries (1.5 s) + holding line": {
    holdingAfterMs: 1000,
    hedgeAfterMs: 0,
    retryFirstByteTimeoutMs: 1500,
  },
  "hedge (1.5 s) + holding line": { holdingAfterMs: 1000, hedgeAfterMs: 1500 },
};

async function measure(hung: "stt" | "tts", faults: Record<string, number>) {
  const openai = new FakeOpenAiServer({ apiKey: KEY });
  const baseUrl = await openai.start();
  const h = await startTelephony({
    mode: "stt-tts",
    talk: {
      providers: {
        openai: {
          baseUrl,
          apiKey: KEY,
          stt: { model: "gpt-4o-mini-transcribe" },
          tts: { model: "gpt-4o-mini-tts", voice: "coral" },
        },
      },
      faults: { ...faults, maxConsecutiveFaults: 100 },
    },
  });
  const firstSound: number[] = [];
  const answer: number[] = [];
  try {
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    if (hung === "stt") openai.audio.stallAfterDeltas = 0;
    else openai.audio.stallAfterChunks = 0;
    for (let r = 0; r < rounds; r++) {
      const committed = h.eventsOf(sessionId, "input.audio.committed").length;
      const deltas = h.eventsOf(sessionId, "output.audio.delta").length;
      // Speech over the last round's answer (its later segments may still hang) interrupts it.
      await client.sendAudio(silence(300), { pace: "fast" });
      await client.sendAudio(speech, { pace: "fast" });
      // Real time from here: the turn ends after the caller's silence, and the wait is what is timed.
      const pause = client.sendAudio(silence(3000), { pace: "realtime" });
      while (h.eventsOf(sessionId, "input.audio.committed").length === committed) await sleep(2);
      const end = performance.now();
      const frames = client.media.length;
      let sound = NaN;
      let first = NaN;
      while (Number.isNaN(first)) {
        const now = performance.now();
        if (Number.isNaN(sound) && client.media.length > frames) sound = now - end;
        if (h.eventsOf(sessionId, "output.audio.delta").length > deltas) first = now - end;
        if (now - end > 60_000) throw new Error("no answer within 60 s");
        await sleep(2);
      }
      firstSound.push(Number.isNaN(sound) ? first : sound);
      answer.push(first);
      await pause;
    }
  } finally {
    await h.close();
    await openai.close();
  }
  return { firstSound, answer };
}

const median = (xs: number[]): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};

console.log(
  `hung STT / TTS request under an stt-tts call (OpenAI-compatible stand-in sends nothing; local engines as fallback), ${rounds} turns each, median ms from the end of the caller's turn`,
);
console.log("| hung | strategy | first sound at the caller | answer's first audio |");
console.log("|---|---|---|---|");
for (const hung of ["stt", "tts"] as const) {
  for (const [name, faults] of Object.entries(STRATEGIES)) {
    const { firstSound, answer } = await measure(hung, faults);
    console.log(`| ${hung} | ${name} | ${fmt(median(firstSound))} | ${fmt(median(answer))} |`);
  }
}
