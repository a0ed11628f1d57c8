/**
 * Brain figures (issue 5):
 * 1. smart chunker throughput on a long text fed in token-sized deltas (it must not be a hot spot);
 * 2. time to first chunk versus whole-answer time for a 2,000-character answer
 *    streamed over --seconds (default 30) by a local OpenAI-compatible server,
 *    through the real agent provider and chunker: what "chunked" and "unchunked"
 *    speech would wait for before TTS can start.
 *
 * 3. time to first audio through the stt-tts pipeline (pocketsphinx in, the
 *    agent provider against the same server, espeak-ng out), chunked versus
 *    unchunked, both sessions in one run side by side: first output.audio.delta
 *    relative to the first complete sentence leaving the agent.
 *
 * Run: npm run bench:brain -- --seconds 3
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { benchParseArgs } from "./lib/bench-cli.js";
import { createSmartChunker } from "../src/voice/speech/smart-chunker.js";
import { createSessionController } from "../src/voice/pipelines/session-controller.js";
import { createTalkRuntime } from "../src/core/session-runtime.js";
import type { TalkEvent } from "../src/core/talk-events.js";
import { createEspeakTts } from "../src/providers/espeak-ng/espeak-tts.js";
import { OpenAiChatAgent } from "../src/providers/openai-compatible/openai-chat-agent.js";
import { createPocketsphinxStt } from "../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { FakeChatCompletionsServer, longAnswer } from "../test/support/fake-chat-completions-server.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    seconds: { type: "string", default: "30" },
    chars: { type: "string", default: "2000" },
    "throughput-mb": { type: "string", default: "4" },
  },
});
const seconds = Number(values.seconds);
const answerChars = Number(values.chars);
const throughputMb = Number(values["throughput-mb"]);
if (!(seconds > 0) || !(answerChars > 0) || !(throughputMb > 0)) {
  throw new Error("--seconds, --chars and --throughput-mb must be positive numbers");
}

function chunkerThroughput(): void {
  const text = longAnswer(Math.round(throughputMb * 1024 * 1024));
  const deltaChars = 4;
  const deltas: string[] = [];
  for (let i = 0; i < text.length; i += deltaChars) deltas.push(text.slice(i, i + deltaChars));
  // Warm-up so the JIT has compiled the scanner before we time it.
  const warm = createSmartChunker();
  for (const d of deltas.slice(0, 50_000)) warm.push(d);
  warm.flush();

  const runs = 3;
  let best = Infinity;
  let chunks = 0;
  for (let r = 0; r < runs; r++) {
    const chunker = createSmartChunker();
    let n = 0;
    const t0 = performance.now();
    for (const d of deltas) n += chunker.push(d).length;
    n += chunker.flush().length;
    best = Math.min(best, performance.now() - t0);
    chunks = n;
  }
  const mb = text.length / (1024 * 1024);
  const t0 = performance.now();
  const onePush = createSmartChunker();
  onePush.push(text);
  onePush.flush();
  const onePushMs = performance.now() - t0;
  const t1 = performance.now();
  const speakChunks = createSmartChunker({ speakable: true });
  for (const d of deltas) speakChunks.push(d);
  speakChunks.flush();
  const speakableMs = performance.now() - t1;

  console.log(
    `chunker: ${mb.toFixed(1)} MiB in ${deltas.length} deltas of ${deltaChars} chars (default options)`,
  );
  console.log(
    `  streamed:        ${(mb / (best / 1000)).toFixed(1)} MiB/s, ${Math.round(chunks / (best / 1000))} chunks/s, ` +
      `${((best * 1e6) / deltas.length).toFixed(0)} ns/delta (${chunks} chunks, best of ${runs})`,
  );
  console.log(`  one push:        ${(mb / (onePushMs / 1000)).toFixed(1)} MiB/s`);
  console.log(`  with toSpeakable: ${(mb / (speakableMs / 1000)).toFixed(1)} MiB/s`);
}

async function timeToFirstChunk(): Promise<void> {
  const answer = longAnswer(answerChars);
  const tokenChars = 4;
  const tokens = Math.ceil(answer.length / tokenChars);
  const tokenDelayMs = (seconds * 1000) / tokens;
  const server = new FakeChatCompletionsServer({ apiKey: "bench", answer, tokenChars, tokenDelayMs });
  const baseUrl = await server.start();
  try {
    const agent = new OpenAiChatAgent({
      baseUrl,
      model: "fake-model",
      apiKey: "bench",
      timeoutMs: (seconds + 60) * 1000,
    });
    const chunker = createSmartChunker();
    const t0 = performance.now();
    let firstDelta: number | undefined;
    let firstChunk: { at: number; text: string; deltas: number } | undefined;
    let firstSentenceLeft: number | undefined;
    let text = "";
    let deltas = 0;
    let chunks = 0;
    for await (const d of agent.consult({
      sessionId: "bench",
      turnId: "t1",
      messages: [{ role: "user", content: "Tell me everything." }],
      signal: new AbortController().signal,
    })) {
      if (d.type !== "text") continue;
      const now = performance.now() - t0;
      firstDelta ??= now;
      deltas++;
      text += d.text;
      // The first complete sentence has left the agent once its end is followed by whitespace.
      if (firstSentenceLeft === undefined && /[.!?]\s/.test(text)) firstSentenceLeft = now;
      const out = chunker.push(d.text);
      if (out.length > 0 && !firstChunk) firstChunk = { at: now, text: out[0]!, deltas };
      chunks += out.length;
    }
    chunks += chunker.flush().length;
    const whole = performance.now() - t0;
    const fc = firstChunk ?? { at: whole, text: "(none before the end)", deltas };
    console.log(
      `\ntime to first chunk: ${answer.length}-char answer, ${tokens} tokens over ~${seconds} s (${tokenDelayMs.toFixed(1)} ms/token), default chunker`,
    );
    console.log(`  first delta from agent:       ${firstDelta?.toFixed(0)} ms`);
    console.log(`  first sentence left agent:    ${firstSentenceLeft?.toFixed(0)} ms`);
    console.log(
      `  first chunk ready (chunked):  ${fc.at.toFixed(0)} ms after ${fc.deltas}/${tokens} tokens (${((100 * fc.at) / whole).toFixed(1)}% of the answer time), ${fc.text.length} chars`,
    );
    console.log(`  whole answer (unchunked):     ${whole.toFixed(0)} ms`);
    console.log(`  chunk lag after sentence:     ${(fc.at - (firstSentenceLeft ?? fc.at)).toFixed(2)} ms`);
    console.log(`  chunks: ${chunks}, first chunk: ${JSON.stringify(fc.text)}`);
  } finally {
    await server.close();
  }
}

interface AudioTiming {
  label: string;
  consultStart: number;
  firstSentence: number | undefined;
  firstAudio: number | undefined;
  answerDone: number | undefined;
}

/** One stt-tts session answering over the pipeline; times in ms from performance.now(). */
async function timeToFirstAudio(label: string, chunked: boolean): Promise<AudioTiming> {
  const answer = longAnswer(answerChars);
  const tokenChars = 4;
  const tokenDelayMs = (seconds * 1000) / Math.ceil(answer.length / tokenChars);
  const server = new FakeChatCompletionsServer({ apiKey: "bench", answer, tokenChars, tokenDelayMs });
  const baseUrl = await server.start();
  const agent = new OpenAiChatAgent({
    baseUrl,
    model: "fake-model",
    apiKey: "bench",
    timeoutMs: (seconds + 60) * 1000,
  });
  const runtime = createTalkRuntime();
  try {
    const session = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const tts = createEspeakTts();
    const stt = createPocketsphinxStt();
    const controller = createSessionController({
      session,
      providers: { stt: () => stt, tts: () => tts, agent: () => agent, realtime: () => undefined },
      options: { brain: { chunker: { enabled: chunked }, progressCueMs: 0, consultTimeoutMs: 0 } },
    });
    const timing: AudioTiming = {
      label,
      consultStart: 0,
      firstSentence: undefined,
      firstAudio: undefined,
      answerDone: undefined,
    };
    let text = "";
    const done = new Promise<void>((resolve) => {
      session.subscribe((e: TalkEvent) => {
        const now = performance.now();
        if (e.type === "output.text.delta") {
          text += (e.payload as { text: string }).text;
          // The first complete sentence has left the agent once its end is followed by whitespace.
          if (timing.firstSentence === undefined && /[.!?]\s/.test(text)) timing.firstSentence = now;
        } else if (e.type === "output.audio.delta") timing.firstAudio ??= now;
        else if (e.type === "output.text.done") timing.answerDone = now;
        else if (e.type === "output.audio.done" || e.type === "turn.cancelled" || e.type === "session.error")
          resolve();
      });
    });
    const requested = server.nextRequest().then(() => (timing.consultStart = performance.now()));
    const audio = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
    const turn = controller.startTurn();
    for (let i = 0; i < audio.byteLength; i += 640)
      controller.appendAudio(audio.subarray(i, Math.min(i + 640, audio.byteLength)));
    await controller.endTurn(turn.id);
    await requested;
    await done;
    return timing;
  } finally {
    await runtime.close();
    await server.close();
  }
}

async function firstAudioFigures(): Promise<void> {
  const runs = await Promise.all([timeToFirstAudio("chunked", true), timeToFirstAudio("unchunked", false)]);
  console.log(
    `\ntime to first audio: ${answerChars}-char answer over ~${seconds} s, stt-tts pipeline with espeak-ng, both sessions side by side`,
  );
  const ms = (t: number | undefined, from: number): string =>
    t === undefined ? "-" : `${(t - from).toFixed(0)} ms`;
  console.log(
    "  session    first sentence   first audio   audio after sentence   whole answer   (times from the agent request)",
  );
  for (const r of runs) {
    console.log(
      `  ${r.label.padEnd(10)} ${ms(r.firstSentence, r.consultStart).padStart(14)} ${ms(r.firstAudio, r.consultStart).padStart(13)} ` +
        `${(r.firstAudio !== undefined && r.firstSentence !== undefined ? `${(r.firstAudio - r.firstSentence).toFixed(0)} ms` : "-").padStart(22)} ` +
        `${ms(r.answerDone, r.consultStart).padStart(14)}`,
    );
  }
}

chunkerThroughput();
await timeToFirstChunk();
await firstAudioFigures();
