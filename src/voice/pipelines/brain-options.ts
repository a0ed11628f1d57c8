import { TalkError } from "../../core/index.js";
import type { RealtimeReplyPath } from "../../core/index.js";
import { SMART_CHUNKER_DEFAULTS } from "../speech/smart-chunker.js";

/**
 * Who plans replies and owns tools in a realtime session (seed 003), latched
 * by the session's controller when the session is created (a reconnect keeps
 * it; nothing changes it mid-session):
 * - `native`: the realtime provider hears, plans and calls tools natively;
 * - `bridge`: the caller's audio goes to the session's local STT instead of
 *   the provider; each final transcript is sent to the provider as labelled
 *   user text; the provider still plans and calls tools;
 * - `brain`: the caller's audio goes to the local STT, the Gateway's agent
 *   answers (with its tool rounds), and the provider is speech transport
 *   only: no tools, no responses of its own, it speaks the agent's text.
 * See realtime-local-replies.ts.
 */
export type ReplyPath = RealtimeReplyPath;
export const REPLY_PATHS: readonly ReplyPath[] = Object.freeze(["native", "bridge", "brain"]);

/** What a reply path means for tools: provider_native sessions offer tools to the provider. */
export type ToolOwnership = "provider_native" | "transport_only";

export function toolOwnershipOf(replyPath: ReplyPath): ToolOwnership {
  return replyPath === "brain" ? "transport_only" : "provider_native";
}

/** Smart chunker sizes used for spoken answers (see src/voice/speech/smart-chunker.ts). */
export interface BrainChunkerOptions {
  /** Chunk the answer and speak each chunk as soon as it is complete. False: speak the whole answer at the end. Default true. */
  enabled?: boolean;
  /** Default 120. */
  minChars?: number;
  /** Default 400. */
  maxChars?: number;
  /** Default 20: a short first sentence starts speech early. */
  firstChunkMinChars?: number;
  /** Default 200. */
  firstChunkMaxChars?: number;
}

/**
 * How the brain's answers are spoken (issue 5). From trusted configuration
 * (`agent.*`), never from a request.
 */
export interface BrainOptions {
  chunker?: BrainChunkerOptions;
  /** Chunks synthesized ahead of the one playing. Default 1 (the next one). */
  ttsPrefetch?: number;
  /** A consult that has produced no speech after this long gets `progressCueText` spoken, ms; 0 = never. Default 2500. */
  progressCueMs?: number;
  /** Default "One moment...". */
  progressCueText?: string;
  /** Longest consult, ms; then it is aborted and `apologyText` spoken; 0 = no limit (the agent provider's own timeout still applies). Default 60 000. */
  consultTimeoutMs?: number;
  /** Default "Sorry, that is taking me too long. Please ask me again in a moment." */
  apologyText?: string;
  /**
   * Realtime sessions: when the provider calls agent_consult, speak the answer's
   * chunks while the consult continues (seed 002's progressive pattern), and
   * deliver the function output at the end. Needs a provider session with
   * `speakText`. Default false.
   */
  progressive?: boolean;
  /** Reply path of realtime sessions. Default "native". stt-tts sessions are always "brain". */
  replyPath?: ReplyPath;
  /**
   * stt-tts: rounds of function calls one answer may make before the agent
   * must answer in text; one more round of calls fails the turn
   * (provider_error, details.reason "tool_rounds_exceeded"). Default 4.
   */
  maxToolRounds?: number;
  /** stt-tts: spoken when a tool failed and the agent then said nothing, so the caller never hears silence. Default "Sorry, that did not work." */
  toolErrorText?: string;
}

export interface ResolvedBrainOptions {
  chunker: Required<BrainChunkerOptions>;
  ttsPrefetch: number;
  progressCueMs: number;
  progressCueText: string;
  consultTimeoutMs: number;
  apologyText: string;
  progressive: boolean;
  replyPath: ReplyPath;
  maxToolRounds: number;
  toolErrorText: string;
}

export const BRAIN_DEFAULTS: Readonly<ResolvedBrainOptions> = Object.freeze({
  chunker: Object.freeze({
    enabled: true,
    minChars: SMART_CHUNKER_DEFAULTS.minChars,
    maxChars: SMART_CHUNKER_DEFAULTS.maxChars,
    firstChunkMinChars: SMART_CHUNKER_DEFAULTS.firstChunkMinChars,
    firstChunkMaxChars: SMART_CHUNKER_DEFAULTS.firstChunkMaxChars,
  }),
  ttsPrefetch: 1,
  progressCueMs: 2500,
  progressCueText: "One moment...",
  consultTimeoutMs: 60_000,
  apologyText: "Sorry, that is taking me too long. Please ask me again in a moment.",
  progressive: false,
  replyPath: "native",
  maxToolRounds: 4,
  toolErrorText: "Sorry, that did not work.",
});

function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Merges over the frozen defaults and validates; a bad value fails at session creation with config_invalid. */
export function resolveBrainOptions(options: BrainOptions = {}): ResolvedBrainOptions {
  const chunker = { ...BRAIN_DEFAULTS.chunker, ...defined(options.chunker) };
  const { chunker: _c, ...rest } = defined(options);
  const o: ResolvedBrainOptions = { ...BRAIN_DEFAULTS, ...rest, chunker };
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `BrainOptions.${field} ${why}`);
  };
  const int = (field: string, v: number, min: number): void => {
    if (!Number.isInteger(v) || v < min) bad(field, `must be an integer >= ${min}`);
  };
  if (typeof chunker.enabled !== "boolean") bad("chunker.enabled", "must be a boolean");
  int("chunker.minChars", chunker.minChars, 1);
  int("chunker.firstChunkMinChars", chunker.firstChunkMinChars, 1);
  if (!Number.isInteger(chunker.maxChars) || chunker.maxChars < chunker.minChars)
    bad("chunker.maxChars", "must be an integer >= minChars");
  if (
    !Number.isInteger(chunker.firstChunkMaxChars) ||
    chunker.firstChunkMaxChars < chunker.firstChunkMinChars
  ) {
    bad("chunker.firstChunkMaxChars", "must be an integer >= firstChunkMinChars");
  }
  int("ttsPrefetch", o.ttsPrefetch, 0);
  int("progressCueMs", o.progressCueMs, 0);
  int("consultTimeoutMs", o.consultTimeoutMs, 0);
  if (typeof o.progressCueText !== "string" || o.progressCueText.trim() === "")
    bad("progressCueText", "must be a non-empty string");
  if (typeof o.apologyText !== "string" || o.apologyText.trim() === "")
    bad("apologyText", "must be a non-empty string");
  if (!Number.isInteger(o.maxToolRounds) || o.maxToolRounds < 0 || o.maxToolRounds > 20)
    bad("maxToolRounds", "must be an integer between 0 and 20");
  if (typeof o.toolErrorText !== "string" || o.toolErrorText.trim() === "")
    bad("toolErrorText", "must be a non-empty string");
  if (typeof o.progressive !== "boolean") bad("progressive", "must be a boolean");
  if (!REPLY_PATHS.includes(o.replyPath)) bad("replyPath", `must be one of ${REPLY_PATHS.join(", ")}`);
  return Object.freeze(o);
}
