import type { AudioChunk } from "./audio-chunk.js";
import { TalkError } from "./errors.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentProvider,
  ProviderKind,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  SttProvider,
  SttStream,
  SttStreamOptions,
  TalkProvider,
  TtsProvider,
  TtsRequest,
} from "./provider-types.js";

/** Options of ProviderOutcomes. */
export interface ProviderOutcomesOptions {
  /** Failures in a row (no success between) that make a provider "failing" for /readyz. Default 3. */
  failureThreshold?: number;
  /**
   * A failing provider with no new outcome for this long is reported ready
   * again (half-open), so a worker taken out of rotation can get the traffic
   * that proves the provider back; its next failure fails it at once. Default 30 000 ms.
   */
  retryAfterMs?: number;
  /** Clock, ms (tests inject one). Default Date.now. */
  now?: () => number;
  /** Told of each failure as it is counted (the process logs it, rate-limited). */
  onFailure?(kind: ProviderKind, id: string, err: unknown): void;
}

/** What /readyz shows of one provider's recent requests. */
export interface ProviderOutcomeStatus {
  ok: boolean;
  /** Failures in a row. */
  failures: number;
  /** The error code of the last failure (never its message: messages may quote upstream text). */
  lastError?: string;
  detail?: string;
}

interface Track {
  failures: number;
  lastError: string | undefined;
  lastFailureAt: number;
}

/**
 * Outcomes of real provider requests (a synthesis, a transcription, a
 * consult, a realtime connection), kept per provider: `failureThreshold`
 * failures in a row fail the provider's readiness until a request succeeds
 * (or, half-open, `retryAfterMs` passes without a new failure). Requests
 * cancelled by their caller are no outcome. `monitor()` wraps a provider so
 * its requests report here; the wrapped object is otherwise the provider.
 */
export class ProviderOutcomes {
  readonly #threshold: number;
  readonly #retryAfterMs: number;
  readonly #now: () => number;
  readonly #tracks = new Map<string, Track>();
  readonly #onFailure: ProviderOutcomesOptions["onFailure"];

  constructor(options: ProviderOutcomesOptions = {}) {
    const threshold = options.failureThreshold ?? 3;
    const retryAfterMs = options.retryAfterMs ?? 30_000;
    if (!Number.isInteger(threshold) || threshold < 1)
      throw new TalkError("config_invalid", "ProviderOutcomes: failureThreshold must be a positive integer.");
    if (!Number.isFinite(retryAfterMs) || retryAfterMs < 0)
      throw new TalkError("config_invalid", "ProviderOutcomes: retryAfterMs must be a non-negative number.");
    this.#threshold = threshold;
    this.#retryAfterMs = retryAfterMs;
    this.#now = options.now ?? Date.now;
    this.#onFailure = options.onFailure;
  }

  /** A request of `kind`/`id` succeeded: the provider is ready again. */
  succeeded(kind: ProviderKind, id: string): void {
    const track = this.#tracks.get(`${kind}/${id}`);
    if (track) {
      track.failures = 0;
      track.lastError = undefined;
    }
  }

  /** A request of `kind`/`id` failed with `err` (a cancellation is not a failure). */
  failed(kind: ProviderKind, id: string, err: unknown): void {
    if (isCancellation(err)) return;
    const key = `${kind}/${id}`;
    const track = this.#tracks.get(key) ?? { failures: 0, lastError: undefined, lastFailureAt: 0 };
    track.failures += 1;
    track.lastError = err instanceof TalkError ? err.code : "provider_error";
    track.lastFailureAt = this.#now();
    this.#tracks.set(key, track);
    this.#onFailure?.(kind, id, err);
  }

  status(kind: ProviderKind, id: string): ProviderOutcomeStatus {
    const track = this.#tracks.get(`${kind}/${id}`);
    if (!track || track.failures === 0) return { ok: true, failures: 0 };
    const base = { failures: track.failures, ...(track.lastError ? { lastError: track.lastError } : {}) };
    if (track.failures < this.#threshold) return { ok: true, ...base };
    const quietMs = this.#now() - track.lastFailureAt;
    if (quietMs >= this.#retryAfterMs) {
      return { ok: true, ...base, detail: `recovering: no failure for ${Math.round(quietMs / 1000)} s` };
    }
    return {
      ok: false,
      ...base,
      detail: `failing: ${track.failures} requests in a row failed (last: ${track.lastError ?? "error"})`,
    };
  }

  /** `provider` with its requests reporting here. Everything else reaches the provider itself. */
  monitor<T extends TalkProvider>(provider: T): T {
    const wrap = this.#wrappers(provider);
    return new Proxy(provider, {
      get: (target, prop) => {
        if (typeof prop === "string" && prop in wrap) return wrap[prop];
        const value: unknown = Reflect.get(target, prop, target);
        // Methods run on the provider itself (its #private fields are not on the proxy).
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  #wrappers(provider: TalkProvider): Record<string, unknown> {
    const { kind, id } = provider;
    const ok = (): void => this.succeeded(kind, id);
    const fail = (err: unknown): void => this.failed(kind, id, err);
    switch (provider.kind) {
      case "tts": {
        const p = provider as TtsProvider;
        return { synthesize: (request: TtsRequest) => observeIterable(p.synthesize(request), ok, fail) };
      }
      case "agent": {
        const p = provider as AgentProvider;
        return {
          consult: (request: AgentConsultRequest) =>
            observeIterable<AgentDelta>(p.consult(request), ok, fail),
        };
      }
      case "stt": {
        const p = provider as SttProvider;
        return {
          startStream: (options: SttStreamOptions) => {
            try {
              return observeStt(p.startStream(options), ok, fail);
            } catch (err) {
              fail(err);
              throw err;
            }
          },
        };
      }
      case "realtime":
        return realtimeWrappers(provider as RealtimeProvider, ok, fail);
    }
  }
}

function isCancellation(err: unknown): boolean {
  if (err instanceof TalkError) return err.code === "cancelled";
  return err instanceof Error && err.name === "AbortError";
}

/** The iterable's items, reporting success when it ends and failure when it throws (or cannot start). */
function observeIterable<T extends AudioChunk | AgentDelta>(
  source: AsyncIterable<T>,
  ok: () => void,
  fail: (err: unknown) => void,
): AsyncIterable<T> {
  return {
    async *[Symbol.asyncIterator]() {
      try {
        yield* source;
      } catch (err) {
        fail(err);
        throw err;
      }
      ok();
    },
  };
}

function observeStt(stream: SttStream, ok: () => void, fail: (err: unknown) => void): SttStream {
  return {
    write: (pcm: Int16Array) => stream.write(pcm),
    pause: () => stream.pause?.(),
    resume: () => stream.resume?.(),
    finish: async () => {
      try {
        const result = await stream.finish();
        ok();
        return result;
      } catch (err) {
        fail(err);
        throw err;
      }
    },
  };
}

function realtimeWrappers(
  p: RealtimeProvider,
  ok: () => void,
  fail: (err: unknown) => void,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const connect = p.connect?.bind(p);
  if (connect) {
    out["connect"] = async (options: RealtimeSessionOptions, onEvent: (e: RealtimeProviderEvent) => void) => {
      const observed = (event: RealtimeProviderEvent): void => {
        if (event.type === "ready") ok();
        else if (event.type === "error" && event.fatal) fail(new TalkError("provider_error", event.message));
        onEvent(event);
      };
      try {
        return await connect(options, observed);
      } catch (err) {
        fail(err);
        throw err;
      }
    };
  }
  const mint = p.createClientSession?.bind(p);
  if (mint) {
    out["createClientSession"] = async (...args: Parameters<typeof mint>) => {
      try {
        const grant = await mint(...args);
        ok();
        return grant;
      } catch (err) {
        fail(err);
        throw err;
      }
    };
  }
  return out;
}
