import type { TranscriptLine } from "./transcript-log.js";

/** Export formats of a bot's transcript (`?format=` / `format`). */
export const TRANSCRIPT_FORMATS = ["json", "vtt", "srt", "txt"] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export const TRANSCRIPT_CONTENT_TYPES: Record<TranscriptFormat, string> = {
  json: "application/json; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
  srt: "application/x-subrip; charset=utf-8",
  txt: "text/plain; charset=utf-8",
};

/** A cue shown for a line without an end (chat, old lines): this long per word, within bounds, ms. */
const MS_PER_WORD = 400;
const MIN_CUE_MS = 1000;
const MAX_CUE_MS = 8000;

interface Cue {
  startMs: number;
  endMs: number;
  speaker: string;
  text: string;
}

/**
 * Cue times relative to the transcript's first moment (the earliest start or
 * at): a line's own start/end when it has them, else `at` for a length read
 * from its word count, never past the next line's start.
 */
function cues(lines: readonly TranscriptLine[]): Cue[] {
  const timed = lines
    .map((line) => {
      const at = Date.parse(line.at);
      const start = line.start !== undefined ? Date.parse(line.start) : at;
      const end = line.end !== undefined ? Date.parse(line.end) : NaN;
      return { line, start, end };
    })
    .filter((t) => Number.isFinite(t.start))
    .sort((a, b) => a.start - b.start);
  if (timed.length === 0) return [];
  const t0 = timed[0]!.start;
  return timed.map(({ line, start, end }, i) => {
    const words = line.text.split(/\s+/).filter((w) => w !== "").length;
    const guessed = start + Math.min(MAX_CUE_MS, Math.max(MIN_CUE_MS, words * MS_PER_WORD));
    let stop = Number.isFinite(end) && end > start ? end : guessed;
    const next = timed[i + 1];
    if (!Number.isFinite(end) && next && next.start > start) stop = Math.min(stop, next.start);
    return {
      startMs: start - t0,
      endMs: Math.max(stop - t0, start - t0 + 1),
      speaker: label(line),
      text: line.text,
    };
  });
}

/** The speaker as exports name it: chat messages marked, so they are not read as speech. */
function label(line: TranscriptLine): string {
  return line.role === "chat" ? `${line.speaker} (chat)` : line.speaker;
}

function clock(ms: number, separator: "." | ","): string {
  const total = Math.max(0, Math.round(ms));
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = Math.floor((total % 60_000) / 1000);
  const frac = total % 1000;
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(frac, 3)}`;
}

/** One line of cue text: no blank lines (they end a cue) and no "-->" (it starts a timing line). */
function cueText(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/-->/g, "->");
}

/** WebVTT escaping of cue text and voice names (&, <, >). */
function vttEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** WebVTT (W3C): one cue per line, the speaker as a voice span `<v Name>`. */
export function toWebVtt(lines: readonly TranscriptLine[]): string {
  const out = ["WEBVTT", ""];
  for (const cue of cues(lines)) {
    out.push(`${clock(cue.startMs, ".")} --> ${clock(cue.endMs, ".")}`);
    // A voice name ends at ">"; escaping keeps names with markup intact.
    out.push(`<v ${vttEscape(cueText(cue.speaker))}>${vttEscape(cueText(cue.text))}`, "");
  }
  return out.join("\n");
}

/** SubRip: numbered cues, comma decimal, the speaker before the text. */
export function toSrt(lines: readonly TranscriptLine[]): string {
  return cues(lines)
    .map(
      (cue, i) =>
        `${i + 1}\n${clock(cue.startMs, ",")} --> ${clock(cue.endMs, ",")}\n${cueText(cue.speaker)}: ${cueText(cue.text)}\n`,
    )
    .join("\n");
}

/** Plain text: `[hh:mm:ss] Speaker: text`, one line each, in time order. */
export function toPlainText(lines: readonly TranscriptLine[]): string {
  return cues(lines)
    .map((cue) => `[${clock(cue.startMs, ".").slice(0, 8)}] ${cueText(cue.speaker)}: ${cueText(cue.text)}\n`)
    .join("");
}

/** The transcript in `format`; JSON is `{botId, lines}` as GET /meetings/bots/:id/transcript answers. */
export function exportTranscript(
  botId: string,
  lines: readonly TranscriptLine[],
  format: TranscriptFormat,
): string {
  switch (format) {
    case "json":
      return JSON.stringify({ botId, lines });
    case "vtt":
      return toWebVtt(lines);
    case "srt":
      return toSrt(lines);
    case "txt":
      return toPlainText(lines);
  }
}
