/**
 * Speaker attribution accuracy in the local test meeting (issue 41): the
 * fraction of caption words put under the right speaker, with three
 * participants in real Chromium, each repeating their own recording with a
 * long pause (Alice and Bob: pocketsphinx-testdata recordings; Carol: an
 * espeak-ng voice), and one transcribing bot, for each kind of evidence the
 * bot can have (docs/meetings.md, "Captions and speakers"):
 *
 * - `track`: mesh audio, each remote track plays in its participant's tile
 *   (a platform that names tracks);
 * - `sources`: the bot's page plays audio outside the tiles
 *   (`audio=detached`), so only the SSRCs the participants announce name
 *   them (Meet's way: an RTP source mapped to a person by the platform);
 * - `marks`: audio outside the tiles and every participant withholding its
 *   SSRCs (`ssrc=withhold`), the room's speaking marks on (`marks=on`): only
 *   the page's active-speaker marks name anyone (Zoom's and Teams' way).
 *
 * Truth is read from the words: each recording has words no other says
 * (Alice "forward meters", Bob "somewhere something", Carol "please open
 * window"); only those words are scored, wherever the
 * recognizer put them. A word is right under its speaker, wrong under
 * another name, unknown under "unknown". The loops are not aligned (each
 * starts when its participant joins), so turns overlap now and then, as
 * people do.
 *
 * Run: npm run bench:meeting-attribution -- --seconds 60 [--modes track,sources,marks]
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { benchParseArgs } from "./lib/bench-cli.js";
import type { TranscriptLine } from "../src/meetings/index.js";
import { speechWav, startMeetingsHarness, wordList } from "../test/integration/meetings-harness.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    seconds: { type: "string", default: "60" },
    modes: { type: "string", default: "track,sources,marks" },
    gap: { type: "string", default: "6" },
  },
});
const seconds = Number(values.seconds);
const gap = Number(values.gap);
const modes = values.modes.split(",");
if (!(seconds >= 20)) throw new Error("--seconds >= 20");
for (const m of modes) if (!["track", "sources", "marks"].includes(m)) throw new Error(`unknown mode ${m}`);

/** Words only this speaker's recording says (the scored words). */
const VOCABULARY: Record<string, readonly string[]> = {
  Alice: ["forward", "meters"],
  Bob: ["somewhere", "something"],
  Carol: ["please", "open", "window"],
};
const OWNER = new Map(Object.entries(VOCABULARY).flatMap(([name, words]) => words.map((w) => [w, name])));

/** Carol's voice: espeak-ng at 16 kHz, then the pause. */
function espeakWav(dir: string, text: string, gapSeconds: number): string {
  const raw = join(dir, "carol-espeak.wav");
  const out = join(dir, "carol.wav");
  execFileSync("espeak-ng", ["-v", "en-us", "-s", "150", "-w", raw, text]);
  execFileSync("sox", [
    "-V1",
    raw,
    "-r",
    "16000",
    "-c",
    "1",
    "-b",
    "16",
    out,
    "pad",
    "0.5",
    String(gapSeconds),
  ]);
  return out;
}

interface Score {
  right: number;
  wrong: number;
  unknown: number;
  perSpeaker: Record<string, { right: number; of: number }>;
  lines: number;
}

function score(lines: TranscriptLine[]): Score {
  const s: Score = { right: 0, wrong: 0, unknown: 0, perSpeaker: {}, lines: 0 };
  for (const line of lines) {
    if (line.role !== undefined) continue;
    s.lines += 1;
    for (const word of wordList(line.text)) {
      const owner = OWNER.get(word);
      if (!owner) continue;
      const entry = (s.perSpeaker[owner] ??= { right: 0, of: 0 });
      entry.of += 1;
      if (line.speaker === owner) {
        s.right += 1;
        entry.right += 1;
      } else if (line.speaker === "unknown") s.unknown += 1;
      else s.wrong += 1;
    }
  }
  return s;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

console.log(
  `# meeting attribution bench: ${seconds}s per mode, 3 participants (2 recordings, 1 espeak-ng) + 1 bot, load ${execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()}`,
);
for (const mode of modes) {
  const h = await startMeetingsHarness({ aloneTimeoutMs: 600_000 });
  try {
    const room = `attribution-${mode}`;
    const withhold = mode === "marks" ? { ssrc: "withhold" } : undefined;
    await h.participant(room, "Alice", speechWav(h.dir, "goforward.raw", gap), withhold);
    await h.participant(room, "Bob", speechWav(h.dir, "something.raw", gap), withhold);
    await h.participant(room, "Carol", espeakWav(h.dir, "please open the window", gap), withhold);
    const query = mode === "track" ? "" : mode === "sources" ? "?audio=detached" : "?audio=detached&marks=on";
    const res = await h.post({
      meetingUrl: `${h.roomUrl(room)}${query}`,
      botName: "Notetaker",
      mode: "transcribe",
    });
    const id = res.body.id;
    await h.waitFor(id, (st) => st.state === "in_call" && st.participants.length === 3, {
      within: 120_000,
      what: "the bot in the call with 3 participants",
    });
    const t0 = Date.now();
    await sleep(seconds * 1000);
    const t1 = Date.now();
    // Lines whose speech started in the window. Captions lag the speech (the recognizer, the speaker floor's
    // queue): wait until a line that started after the window is in (the window's are then done), 90 s at most.
    const started = (l: TranscriptLine): number => (l.start === undefined ? NaN : Date.parse(l.start));
    const inWindow = (l: TranscriptLine): boolean => started(l) >= t0 && started(l) < t1;
    let lines = await h.transcript(id);
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && !lines.some((l) => started(l) >= t1)) {
      await sleep(2000);
      lines = await h.transcript(id);
    }
    const s = score(lines.filter(inWindow));
    const scored = s.right + s.wrong + s.unknown;
    const fraction = (n: number): number => (scored === 0 ? NaN : Number((n / scored).toFixed(3)));
    console.log(
      JSON.stringify({
        mode,
        seconds,
        captionLines: s.lines,
        // Caption delay: the window's last line done after the window's end, s (a loaded machine lags).
        drainedAfterS: Math.round((Date.now() - t1) / 1000),
        scoredWords: scored,
        right: fraction(s.right),
        wrong: fraction(s.wrong),
        unknown: fraction(s.unknown),
        perSpeaker: s.perSpeaker,
        lines: lines.filter(inWindow).map((l) => `${l.speaker}: ${l.text}`),
      }),
    );
  } finally {
    await h.close();
  }
}
