/**
 * What the local recognizer hears for short utterances over a phone line, and
 * what the barge-in policy makes of it (issue 15): backchannels ("Mm-hmm.",
 * "Yeah." ...) and short interruptions ("Wait.", "Stop.", "No, go back." ...)
 * by espeak-ng in six voices at two speeds, each alone on a u-law line with
 * hiss, through the pocketsphinx provider (resident decoder, as a session
 * uses it), then judged by BargeInPolicy with and without matchBySound.
 * Offline and faster than real time: it measures the words, not the leg
 * (turn-taking.bench.ts runs the leg).
 *
 *   node --import tsx bench/backchannel-words.bench.ts [--out heard.jsonl] [--audio dir] [--stt pocketsphinx,moonshine]
 *
 * --stt: the local recognizers, each fed the same utterances in the same run (default both; the
 * policies' columns are per recognizer).
 *
 * --audio writes each utterance's 16 kHz PCM (what the recognizer got) as
 * dir/<n>.raw, n its line in --out (from 0), and --out then carries the
 * by-sound verdict: bench/backchannel-kws.py replays them through a
 * restricted search (keyword spotting) without synthesizing again.
 *
 * Prints, per phrase, how many utterances each policy lets interrupt, and the
 * totals: backchannels that would cut the answer, interruptions that would
 * not (a false resume).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { benchParseArgs } from "./lib/bench-cli.js";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { createResampler } from "../src/codecs/resampler.js";
import { BargeInPolicy } from "../src/voice/pipelines/barge-in-policy.js";
import { PCM16_16K } from "../src/core/talk-types.js";
import { DEBIAN_CMUDICT, pronouncerOf } from "../src/app/pronunciations.js";
import type { SttProvider } from "../src/core/provider-types.js";
import { createMoonshineStt } from "../src/providers/moonshine/moonshine-stt.js";
import { createPocketsphinxStt } from "../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { activeLevelDb, atLevel, espeak, lineHiss, rng, trim } from "./lib/corpus-audio.js";
import { SPEECH_LEVEL_DB } from "./lib/turn-corpus.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    out: { type: "string" },
    audio: { type: "string" },
    stt: { type: "string", default: "pocketsphinx,moonshine" },
  },
  strict: true,
});

const BACKCHANNELS = [
  "Mm-hmm.",
  "Yeah.",
  "Okay.",
  "Right.",
  "Uh-huh.",
  "Yep.",
  "Sure.",
  "Yes.",
  "Mhm.",
  "Alright.",
];
const INTERRUPTIONS = [
  "Wait.",
  "Stop.",
  "No.",
  "Hold on.",
  "Sorry?",
  "What?",
  "No, go back.",
  "Excuse me.",
  "Hang on.",
  "Go back.",
  "Not now.",
  "Repeat that.",
];
const VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb-x-rp+m3", "en-us+m2", "en-gb+f4"];
const SPEEDS = [150, 180];

interface Heard {
  kind: "backchannel" | "interruption";
  text: string;
  voice: string;
  speed: number;
  voicedMs: number;
  /** What the first recognizer heard (bench/backchannel-kws.py reads it). */
  heard: string;
  /** What each recognizer heard. */
  heardBy: Record<string, string>;
}

const RECOGNIZERS: Record<string, () => SttProvider> = {
  pocketsphinx: () => createPocketsphinxStt({ maxIdleDecoders: 1 }),
  moonshine: () => createMoonshineStt(),
};
const recognizerIds = values.stt.split(",").filter(Boolean);
for (const id of recognizerIds)
  if (!RECOGNIZERS[id])
    throw new Error(`--stt: unknown recognizer "${id}" (${Object.keys(RECOGNIZERS).join(", ")})`);
if (recognizerIds.length === 0) throw new Error("--stt names no recognizer");
const recognizers = recognizerIds.map((id) => ({ id, stt: RECOGNIZERS[id]!() }));
const heard: Heard[] = [];
for (const [kind, phrases] of [
  ["backchannel", BACKCHANNELS],
  ["interruption", INTERRUPTIONS],
] as const)
  for (const text of phrases)
    for (const voice of VOICES)
      for (const speed of SPEEDS) {
        const r = rng("backchannel-words", text, voice, speed);
        const spoken = trim(espeak(text, voice, speed, Math.round(35 + 30 * r())));
        const pcm = atLevel(spoken, SPEECH_LEVEL_DB + 6 * r() - 3, activeLevelDb);
        // 300 ms of line before, 1.5 s after: the recognizer's own endpointing ends the utterance in it.
        const before = 300 * 8;
        const track = lineHiss(r, before + pcm.length + 1500 * 8, -66);
        for (let i = 0; i < pcm.length; i++) track[before + i] = track[before + i]! + pcm[i]!;
        const line = decodeMulaw(
          encodeMulaw(Int16Array.from(track, (v) => Math.max(-32768, Math.min(32767, Math.round(v))))),
        );
        const up = createResampler({ from: 8000, to: 16000 });
        const streams = recognizers.map(({ stt }) =>
          stt.startStream({ format: PCM16_16K, signal: new AbortController().signal }),
        );
        const chunks: Int16Array[] = [];
        for (let i = 0; i + 160 <= line.length; i += 160) {
          const c = up.process(line.subarray(i, i + 160));
          if (values.audio) chunks.push(c);
          for (const stream of streams) stream.write(c);
        }
        if (values.audio)
          writeFileSync(
            `${values.audio}/${heard.length}.raw`,
            Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))),
          );
        const results = await Promise.all(streams.map((stream) => stream.finish()));
        up.close();
        const heardBy = Object.fromEntries(recognizerIds.map((id, k) => [id, results[k]!.text]));
        const voicedMs = Math.round(pcm.length / 8);
        heard.push({ kind, text, voice, speed, voicedMs, heard: results[0]!.text, heardBy });
        process.stderr.write(`\r${heard.length} utterances`);
      }
process.stderr.write("\n");
for (const { stt } of recognizers) await stt.close?.();

const pronounce = pronouncerOf(readFileSync(DEBIAN_CMUDICT, "utf8"));
const policies = {
  "by word": new BargeInPolicy({ interruptOnSpeech: true, confirmWithWords: true, matchBySound: false }),
  "by sound": new BargeInPolicy({ interruptOnSpeech: true, confirmWithWords: true, pronounce }),
};
if (values.out)
  writeFileSync(
    values.out,
    heard.map((h) => JSON.stringify({ ...h, bySound: policies["by sound"].judge(h.heard) })).join("\n") +
      "\n",
  );
/** A column: a recognizer and a policy. */
const names = recognizerIds.flatMap((id) =>
  (Object.keys(policies) as (keyof typeof policies)[]).map((policy) => ({
    id,
    policy,
    name: `${id} ${policy}`,
  })),
);
const interrupts = (n: (typeof names)[number], h: Heard): boolean =>
  policies[n.policy].judge(h.heardBy[n.id]!) === "interrupt";

console.log(`| phrase | utterances | voiced, ms | ${names.map((n) => `interrupt, ${n.name}`).join(" | ")} |`);
console.log(`|---|---|---|${names.map(() => "---").join("|")}|`);
for (const text of [...BACKCHANNELS, ...INTERRUPTIONS]) {
  const of = heard.filter((h) => h.text === text);
  const voiced = of.map((h) => h.voicedMs);
  console.log(
    `| ${text} | ${of.length} | ${Math.min(...voiced)}-${Math.max(...voiced)} | ${names.map((n) => of.filter((h) => interrupts(n, h)).length).join(" | ")} |`,
  );
}
for (const n of names) {
  const bc = heard.filter((h) => h.kind === "backchannel");
  const int = heard.filter((h) => h.kind === "interruption");
  const cut = bc.filter((h) => interrupts(n, h)).length;
  const passed = int.filter((h) => !interrupts(n, h));
  console.log(
    `${n.name}: backchannels that interrupt ${cut} / ${bc.length}; interruptions that do not ${passed.length} / ${int.length}` +
      (passed.length > 0
        ? ` (${passed.map((h) => `"${h.text}" heard as "${h.heardBy[n.id]}"`).join(", ")})`
        : ""),
  );
}
