import { TalkError } from "./errors.js";
import type { ProviderKind } from "./provider-types.js";

/**
 * What a media leg does when a provider fails under it (talk.faults.*): the
 * caller hears a line that cannot fail (pre-rendered at start-up), then the
 * leg either recovers (a new provider session, the next turn on a retried or
 * fallback provider) or hangs up with reason `provider_lost`.
 */
export type FaultPolicy = "reconnect" | "hangup";

export interface FaultOptions {
  /** What follows the apology. Default "reconnect". */
  policy?: FaultPolicy;
  /** Longest wait for a provider's first audio / text / result once it is due, ms. Default 5000. */
  firstByteTimeoutMs?: number;
  /** Longest gap between two chunks of a provider stream in progress, ms. Default 3000. */
  interChunkTimeoutMs?: number;
  /** Retries of an idempotent request (STT, TTS, agent before its first token) and reconnects of a realtime session, per fault. Default 2. */
  retries?: number;
  /** Wait before the first retry, ms; doubled for each further one. Default 250. */
  retryBackoffMs?: number;
  /** Faults in a row (no answer heard in between) after which the leg hangs up whatever the policy. Default 3. */
  maxConsecutiveFaults?: number;
  /**
   * A recognizer's result or a synthesizer's first audio still missing this
   * long after it was due: the caller hears the holding line (once per turn)
   * while the request is waited for, retried or replaced, ms; 0 never. Default 1000.
   */
  holdingAfterMs?: number;
  /**
   * A retry's wait for its first byte, ms (at most firstByteTimeoutMs): the
   * provider failed this request once already. 0: firstByteTimeoutMs. Default 0.
   */
  retryFirstByteTimeoutMs?: number;
  /**
   * An STT or TTS request whose default provider has delivered nothing this
   * long is hedged: the fallback starts beside it and the first to deliver is
   * used, ms; 0: no hedge (the fallback only after the retries). Default 1500.
   */
  hedgeAfterMs?: number;
}

export type ResolvedFaultOptions = Readonly<Required<FaultOptions>>;

export const FAULT_DEFAULTS: ResolvedFaultOptions = Object.freeze({
  policy: "reconnect",
  firstByteTimeoutMs: 5000,
  interChunkTimeoutMs: 3000,
  retries: 2,
  retryBackoffMs: 250,
  maxConsecutiveFaults: 3,
  holdingAfterMs: 1000,
  retryFirstByteTimeoutMs: 0,
  hedgeAfterMs: 1500,
});

/** Bounds of each numeric option (also the config schema's). */
export const FAULT_LIMITS = Object.freeze({
  firstByteTimeoutMs: [200, 120_000],
  interChunkTimeoutMs: [100, 120_000],
  retries: [0, 10],
  retryBackoffMs: [0, 60_000],
  maxConsecutiveFaults: [1, 100],
  holdingAfterMs: [0, 60_000],
  retryFirstByteTimeoutMs: [0, 120_000],
  hedgeAfterMs: [0, 120_000],
} as const);

/** Merges over the defaults and checks the ranges; config_invalid naming the field. */
export function resolveFaultOptions(options: FaultOptions = {}): ResolvedFaultOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const o = { ...FAULT_DEFAULTS, ...defined } as Required<FaultOptions>;
  if (o.policy !== "reconnect" && o.policy !== "hangup")
    throw new TalkError("config_invalid", `FaultOptions.policy must be "reconnect" or "hangup".`);
  for (const [field, [min, max]] of Object.entries(FAULT_LIMITS)) {
    const value = o[field as keyof typeof FAULT_LIMITS];
    if (!Number.isInteger(value) || value < min || value > max)
      throw new TalkError(
        "config_invalid",
        `FaultOptions.${field} must be an integer from ${min} to ${max}.`,
      );
  }
  return Object.freeze(o);
}

/** How a provider failed. */
export type ProviderFaultKind =
  /** The provider could not be reached or refused the session (at start or on a reconnect). */
  | "connect_failed"
  /** The provider's connection ended under an open session (socket terminated, closed 1011). */
  | "connection_lost"
  /** The provider reported a failure of its own (an error event, a failed response, a 5xx after retries). */
  | "provider_error"
  /** The provider stopped sending: no first byte, or a gap between chunks, past the configured timeout. */
  | "stalled";

/** One provider failure, as a pipeline reports it to its leg. */
export interface ProviderFault {
  kind: ProviderFaultKind;
  /** Which kind of provider failed. */
  provider: ProviderKind;
  message: string;
  /** The provider's own code, when it gave one. */
  upstreamCode?: string;
}

/** What the leg decided: recover (the pipeline reconnects or carries on) or hang up (the pipeline stops trying). */
export type FaultDecision = "recover" | "hangup";

/**
 * The leg's side of the one failure path, handed to its controller: the
 * pipeline reports each provider failure once (after its own retries), and
 * when its recovery finally fails.
 */
export interface FaultHandler {
  /** A provider failed: the caller hears the apology at once; the answer says whether to recover. */
  fault(fault: ProviderFault): FaultDecision;
  /** Recovery failed (every reconnect refused): the caller hears the goodbye and the leg hangs up. */
  lost(fault: ProviderFault): void;
  /** The provider works again (a new session is up). */
  recovered(): void;
  /**
   * A recognizer or synthesizer is late (holdingAfterMs past due): the caller
   * hears the holding line unless something plays; nothing is reported.
   */
  holding(provider: ProviderKind): void;
}
