import { TalkError } from "../../core/index.js";

/**
 * Voice directives (seed 004): an agent answer may start with a JSON object
 * that sets TTS parameters, e.g. `{"voice":"alloy","once":true,"speed":1.1}`.
 * The object is never spoken. With `once: true` it applies to this reply,
 * otherwise to the rest of the session; applying it is the pipeline's job,
 * this module only recognises and validates it.
 *
 * The parser is streaming-aware: it holds text back only while it cannot yet
 * tell whether the answer begins with a directive, so speech is delayed by at
 * most the directive itself. Text that only looks like a directive (invalid
 * JSON, no known key, a "{" not closed within `maxDirectiveChars`) is passed
 * on unchanged: it is spoken, never dropped.
 */

export interface VoiceDirective {
  voice?: string;
  model?: string;
  /** Speaking rate, 1.0 = normal (`speed`, or its alias `rate`). */
  speed?: number;
  /** 0..1 */
  stability?: number;
  /** 0..1 */
  similarity?: number;
  /** 0..1 */
  style?: number;
  /** True: this reply only. False: the rest of the session. */
  once: boolean;
}

export interface DirectiveParseResult {
  /** Set on the one result that completes a directive. */
  directive?: VoiceDirective;
  /** Keys in the directive that are not voice settings (the caller logs them). */
  ignoredKeys?: string[];
  /** Known keys whose value has the wrong type or range, also ignored (the caller logs them). */
  invalidKeys?: string[];
  /** Text to pass on (speak); "" while the parser is still deciding. */
  text: string;
}

export interface DirectiveParserOptions {
  /**
   * Longest directive, in characters from the start of the answer: a "{"
   * still open after this many characters is taken as text. Default 500.
   */
  maxDirectiveChars?: number;
}

export interface DirectiveParser {
  push(delta: string): DirectiveParseResult;
  /** Ends the answer: releases text still held back (an unclosed "{" is text). */
  flush(): DirectiveParseResult;
  /** True once the parser has decided (directive found or not); later pushes pass text through. */
  readonly decided: boolean;
}

export const DIRECTIVE_PARSER_DEFAULTS: Readonly<Required<DirectiveParserOptions>> = Object.freeze({
  maxDirectiveChars: 500,
});

export const VOICE_DIRECTIVE_KEYS = Object.freeze([
  "voice",
  "model",
  "speed",
  "rate",
  "stability",
  "similarity",
  "style",
  "once",
]);

export function createDirectiveParser(options: DirectiveParserOptions = {}): DirectiveParser {
  const maxDirectiveChars = options.maxDirectiveChars ?? DIRECTIVE_PARSER_DEFAULTS.maxDirectiveChars;
  if (!Number.isInteger(maxDirectiveChars) || maxDirectiveChars < 2) {
    throw new TalkError(
      "config_invalid",
      "voice directive: maxDirectiveChars must be an integer of at least 2",
    );
  }
  return new DirectiveParserImpl(maxDirectiveChars);
}

/** Parses a complete answer: the directive (if any) and the text to speak. */
export function parseVoiceDirective(
  answer: string,
  options: DirectiveParserOptions = {},
): DirectiveParseResult {
  const parser = createDirectiveParser(options);
  const first = parser.push(answer);
  const rest = parser.flush();
  return { ...first, text: first.text + rest.text };
}

class DirectiveParserImpl implements DirectiveParser {
  readonly #max: number;
  #held = "";
  #decided = false;
  /** After a directive, whitespace up to the first spoken character is dropped. */
  #trimLeading = false;
  // JSON object scanner state, kept across pushes so each character is read once.
  #scanned = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #objectStart = -1;

  constructor(max: number) {
    this.#max = max;
  }

  get decided(): boolean {
    return this.#decided;
  }

  push(delta: string): DirectiveParseResult {
    if (typeof delta !== "string") throw new TalkError("invalid_params", "push() takes a string.");
    if (this.#decided) return { text: this.#passOn(delta) };
    this.#held += delta;
    return this.#scan();
  }

  flush(): DirectiveParseResult {
    if (this.#decided) return { text: "" };
    return this.#release();
  }

  #passOn(text: string): string {
    if (!this.#trimLeading) return text;
    const trimmed = text.trimStart();
    if (trimmed.length > 0) this.#trimLeading = false;
    return trimmed;
  }

  /** Gives up on a directive: everything held is text. */
  #release(): DirectiveParseResult {
    this.#decided = true;
    const text = this.#held;
    this.#held = "";
    return { text };
  }

  #scan(): DirectiveParseResult {
    const held = this.#held;
    if (this.#objectStart < 0) {
      const start = held.search(/\S/);
      if (start < 0) return held.length > this.#max ? this.#release() : { text: "" };
      if (held[start] !== "{") return this.#release();
      this.#objectStart = start;
      this.#scanned = start;
    }
    for (let i = this.#scanned; i < held.length; i++) {
      const ch = held[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (ch === "\\") this.#escaped = true;
        else if (ch === '"') this.#inString = false;
      } else if (ch === '"') {
        this.#inString = true;
      } else if (ch === "{") {
        this.#depth++;
      } else if (ch === "}") {
        this.#depth--;
        if (this.#depth === 0) return this.#complete(i + 1);
      }
      if (i + 1 > this.#max) return this.#release();
    }
    this.#scanned = held.length;
    return { text: "" };
  }

  /** The object spans held[objectStart, end). */
  #complete(end: number): DirectiveParseResult {
    const json = this.#held.slice(this.#objectStart, end);
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      return this.#release();
    }
    const result = toDirective(parsed);
    if (!result) return this.#release();
    this.#decided = true;
    this.#trimLeading = true;
    const rest = this.#held.slice(end);
    this.#held = "";
    return { ...result, text: this.#passOn(rest) };
  }
}

type DirectiveFields = Pick<DirectiveParseResult, "directive" | "ignoredKeys" | "invalidKeys">;

/** A directive from a parsed object, or undefined when it holds no voice key (then it is just text). */
function toDirective(value: unknown): DirectiveFields | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (!keys.some((k) => VOICE_DIRECTIVE_KEYS.includes(k))) return undefined;
  const directive: VoiceDirective = { once: false };
  const ignoredKeys = keys.filter((k) => !VOICE_DIRECTIVE_KEYS.includes(k));
  const invalidKeys: string[] = [];
  const text = (key: "voice" | "model"): void => {
    const v = record[key];
    if (v === undefined) return;
    if (typeof v === "string" && v.trim().length > 0 && v.length <= 200) directive[key] = v.trim();
    else invalidKeys.push(key);
  };
  const unit = (key: "stability" | "similarity" | "style"): void => {
    const v = record[key];
    if (v === undefined) return;
    if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1) directive[key] = v;
    else invalidKeys.push(key);
  };
  text("voice");
  text("model");
  unit("stability");
  unit("similarity");
  unit("style");
  for (const key of ["speed", "rate"] as const) {
    const v = record[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) invalidKeys.push(key);
    // `speed` wins over its alias when both are given.
    else if (key === "speed" || directive.speed === undefined) directive.speed = v;
  }
  if (record.once !== undefined) {
    if (typeof record.once === "boolean") directive.once = record.once;
    else invalidKeys.push("once");
  }
  return {
    directive,
    ...(ignoredKeys.length > 0 ? { ignoredKeys } : {}),
    ...(invalidKeys.length > 0 ? { invalidKeys } : {}),
  };
}
