/**
 * Turns markdown-ish agent text into text a TTS engine can read aloud: no
 * "**", "#", "```" or link URLs spoken. Works on any fragment (a chunk may
 * open a bold span or a code fence that another chunk closes), so it strips
 * unbalanced markers too. Pure, no I/O.
 *
 * - headings, blockquote and bullet markers at a line start are removed;
 *   ordered-list numbers are kept ("1." is read as a number);
 * - code fence lines are removed and the code kept as text; inline code keeps
 *   its content;
 * - links and images read as their text: [text](url) -> text, ![alt](url) -> alt,
 *   <https://x> -> https://x;
 * - emphasis markers (** __ * _ ~~) are removed, but not "*" or "_" inside a
 *   word or between spaces (2 * 3, snake_case);
 * - table rows read as comma-separated cells, separator rows and rules vanish;
 * - each line that does not end in punctuation gets a full stop, so list items
 *   and headings keep a pause; whitespace is collapsed to single spaces.
 */
export function toSpeakable(text: string): string {
  const lines: string[] = [];
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = speakableLine(rawLine);
    if (line.length > 0) lines.push(line);
  }
  return lines
    .map((line, i) => (i < lines.length - 1 && !ENDS_WITH_PUNCTUATION.test(line) ? `${line}.` : line))
    .join(" ");
}

const ENDS_WITH_PUNCTUATION = /[.!?…:;,。！？]$/u;

function speakableLine(line: string): string {
  if (FENCE.test(line) || RULE.test(line) || TABLE_SEPARATOR.test(line)) return "";
  let s = line
    .replace(HEADING, "")
    .replace(BLOCKQUOTE, "")
    .replace(BULLET, "")
    .replace(TASK_BOX, "")
    // Links before emphasis so "[**x**](u)" works; images before links.
    .replace(IMAGE, "$1")
    .replace(LINK, "$1")
    .replace(REFERENCE_LINK, "$1")
    .replace(AUTOLINK, "$1")
    .replace(HTML_TAG, " ")
    .replace(INLINE_CODE, "$1")
    .replace(STRONG_OR_STRIKE, "")
    .replace(EMPHASIS_STAR_OPEN, "$1")
    .replace(EMPHASIS_STAR_CLOSE, "$1")
    .replace(EMPHASIS_UNDERSCORE_OPEN, "$1")
    .replace(EMPHASIS_UNDERSCORE_CLOSE, "$1")
    .replace(STRAY_BACKTICKS, "")
    .replace(ESCAPE, "$1");
  if (s.includes("|")) s = tableRow(s);
  return s.replace(/\s+/g, " ").trim();
}

function tableRow(s: string): string {
  const cells = s
    .replace(/^\s*\|/, "")
    .replace(/\|\s*$/, "")
    .split("|")
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
  return cells.join(", ");
}

const FENCE = /^\s*(?:```|~~~)/;
const RULE = /^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const HEADING = /^\s{0,3}#{1,6}(?:\s+|$)/;
const BLOCKQUOTE = /^\s{0,3}(?:>\s?)+/;
const BULLET = /^\s*[-*+•]\s+/;
const TASK_BOX = /^\[[ xX]\]\s+/;
const IMAGE = /!\[([^\]]*)\]\([^)]*\)/g;
const LINK = /\[([^\]]+)\]\([^)]*\)/g;
const REFERENCE_LINK = /\[([^\]]+)\]\[[^\]]*\]/g;
const AUTOLINK = /<((?:https?:\/\/|mailto:)[^>\s]+)>/g;
const HTML_TAG = /<\/?[a-zA-Z][^<>]*>/g;
const INLINE_CODE = /`+([^`]+)`+/g;
const STRONG_OR_STRIKE = /\*\*+|__+|~~+/g;
/** "*" opening a span: at the start or after space/punctuation, before a non-space. */
const EMPHASIS_STAR_OPEN = /(^|[\s([{"'“‘])\*(?=\S)/g;
/** "*" closing a span: after a non-space, before the end, space or punctuation. */
const EMPHASIS_STAR_CLOSE = /(\S)\*(?=$|[\s.,;:!?)\]}"'”’])/g;
const EMPHASIS_UNDERSCORE_OPEN = /(^|[\s([{"'“‘])_(?=[^\s_])/g;
const EMPHASIS_UNDERSCORE_CLOSE = /([^\s_])_(?=$|[\s.,;:!?)\]}"'”’])/g;
const STRAY_BACKTICKS = /`+/g;
const ESCAPE = /\\([\\`*_{}[\]()#+\-.!~|>])/g;
