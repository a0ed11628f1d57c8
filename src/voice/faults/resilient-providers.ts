import { abortableDelay, cancelledError } from "../../core/index.js";
import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import { PcmConverter } from "../pipelines/pcm-converter.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentProvider,
  AudioChunk,
  ProviderDescriptor,
  ProviderHealth,
  SttProvider,
  SttResult,
  SttStream,
  SttStreamOptions,
  TtsProvider,
  TtsRequest,
} from "../../core/index.js";
import { sameAudioFormat } from "../../core/index.js";
import type { ResolvedFaultOptions } from "../../core/index.js";
import { StallWatchdog } from "./stall-watchdog.js";

/** How the wrappers retry and time their providers (talk.faults). */
export type ResilienceOptions = Pick<
  ResolvedFaultOptions,
  "retries" | "retryBackoffMs" | "firstByteTimeoutMs" | "interChunkTimeoutMs"
> &
  Partial<Pick<ResolvedFaultOptions, "retryFirstByteTimeoutMs" | "hedgeAfterMs">> & {
    logger: TalkLogger;
    /** Each attempt's outcome: failed (with its error) or delivered (its first audio, text or result). */
    onOutcome?(provider: ProviderDescriptor, ok: boolean, error?: TalkError): void;
  };

/** Caller audio an STT stream keeps for a retry or a fallback, seconds; a longer turn is not retried. */
const STT_REPLAY_SECONDS = 120;

/**
 * One provider of a kind as a chain: the default first, then its fallbacks.
 * Each request runs on the first provider; a retryable failure before
 * anything was delivered (5xx, unreachable, a stall past the timeouts) is
 * retried with backoff, then the next provider of the chain is tried, so a
 * cloud TTS that fails falls back to the local engine. A failure after part
 * of the result was delivered (audio heard, tokens spoken) is not retried:
 * repeating it would be heard twice; it fails the turn. `invalid_params` (the
 * provider refused this request) goes back at once.
 */
abstract class ProviderChain<P extends ProviderDescriptor> {
  readonly chain: readonly P[];
  protected readonly o: ResilienceOptions;

  constructor(chain: readonly P[], options: ResilienceOptions) {
    if (chain.length === 0) throw new TalkError("config_invalid", "A provider chain needs a provider.");
    this.chain = chain;
    this.o = options;
  }

  get id(): string {
    return this.chain[0]!.id;
  }
  get label(): string {
    return this.chain[0]!.label;
  }
  get capabilities(): P["capabilities"] {
    return this.chain[0]!.capabilities;
  }
  health(): Promise<ProviderHealth> {
    return this.chain[0]!.health();
  }

  /** How long the default provider may deliver nothing before the fallbacks start beside it, ms; 0: no hedge. */
  get hedgeAfterMs(): number {
    return this.o.hedgeAfterMs ?? 0;
  }

  /** Attempts in order: every provider, each `1 + retries` times while its failures are retryable. */
  *attempts(): Generator<{ provider: P; index: number; attempt: number }> {
    for (const [index, provider] of this.chain.entries())
      for (let attempt = 0; attempt <= this.o.retries; attempt++) yield { provider, index, attempt };
  }

  /** The wait before `attempt` of a provider (none before the first). */
  wait(attempt: number, signal: AbortSignal): Promise<void> {
    return attempt === 0
      ? Promise.resolve()
      : abortableDelay(this.o.retryBackoffMs * 2 ** (attempt - 1), signal);
  }

  /**
   * A stall watchdog over one attempt of `provider`, on the chain's timeouts.
   * A local engine (capabilities.local) is not timed: it cannot be
   * unreachable, its speed is the machine's, and it is the last resort.
   */
  guard(provider: P, onStall: (error: TalkError) => void, what: string, attempt = 0): StallWatchdog {
    const untimed = provider.capabilities.local === true;
    // A retry waits less for its first byte (retryFirstByteTimeoutMs): the provider already failed this request once.
    const retryWait = this.o.retryFirstByteTimeoutMs ?? 0;
    const firstByte =
      attempt > 0 && retryWait > 0
        ? Math.min(retryWait, this.o.firstByteTimeoutMs)
        : this.o.firstByteTimeoutMs;
    return new StallWatchdog({
      firstByteTimeoutMs: untimed ? 0 : firstByte,
      interChunkTimeoutMs: untimed ? 0 : this.o.interChunkTimeoutMs,
      onStall: (kind, ms) =>
        onStall(
          new TalkError(
            "timeout",
            `${what} sent nothing for ${ms} ms (${kind === "first_byte" ? "no first byte" : "between chunks"}).`,
            { details: { stall: kind, timeoutMs: ms } },
          ),
        ),
    });
  }

  /** An attempt of `provider` delivered: it works (again). */
  delivered(provider: P): void {
    this.o.onOutcome?.(provider, true);
  }

  report(provider: P, attempt: number, error: TalkError): void {
    this.o.onOutcome?.(provider, false, error);
    this.o.logger.warn(
      {
        provider: provider.id,
        kind: provider.kind,
        attempt: attempt + 1,
        code: error.code,
        err: error.message,
      },
      "provider request failed",
    );
  }
}

/** Whether `err` is a chain's stall (a provider that sent nothing past firstByteTimeoutMs / interChunkTimeoutMs). */
export function isProviderStall(err: unknown): err is TalkError {
  return err instanceof TalkError && err.code === "timeout" && typeof err.details?.["stall"] === "string";
}

/** The error an attempt failed with: the stall's own when the watchdog stopped it. */
function attemptError(err: unknown, stall: AbortSignal): TalkError {
  const reason: unknown = stall.reason;
  if (stall.aborted && reason instanceof TalkError) return reason;
  return toTalkError(err, "provider_error");
}

/** Whether the chain moves on: another attempt of the same provider (retry), the next provider (skip) or none (throw). */
function nextStep(error: TalkError): "retry" | "skip" | "throw" {
  if (error.code === "invalid_params" || error.code === "cancelled") return "throw";
  return error.retryable ? "retry" : "skip";
}

/** it.next(), or the signal's reason as soon as it aborts (a provider stuck on a read is not waited for). */
function nextOrAbort<T>(it: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T>> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    it.next()
      .then(resolve, reject)
      .finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A promise, or the signal's reason as soon as it aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    // The work already started settles later (a cancelled STT stream rejects): nobody waits for it now.
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A streamed request run over the chain: retried and failed over only before its first item. */
async function* streamOverChain<P extends ProviderDescriptor, T>(
  chain: ProviderChain<P>,
  signal: AbortSignal,
  open: (provider: P, index: number, signal: AbortSignal) => AsyncIterable<T>,
  firstByte: boolean,
  providers: (index: number) => boolean = () => true,
): AsyncGenerator<T> {
  let last: TalkError | undefined;
  let skip = -1;
  for (const { provider, index, attempt } of chain.attempts()) {
    if (index === skip || !providers(index)) continue;
    if (signal.aborted) throw cancelledError(signal);
    await chain.wait(attempt, signal);
    const stall = new AbortController();
    const attemptSignal = AbortSignal.any([signal, stall.signal]);
    const watchdog = chain.guard(
      provider,
      (e) => stall.abort(e),
      `${provider.kind} provider ${provider.id}`,
      attempt,
    );
    if (firstByte) watchdog.expect();
    let delivered = false;
    const it = open(provider, index, attemptSignal)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const r = await nextOrAbort(it, attemptSignal);
        if (r.done) return;
        if (delivered || firstByte) watchdog.progress();
        else {
          watchdog.expect();
          watchdog.progress();
        }
        if (!delivered) chain.delivered(provider);
        delivered = true;
        yield r.value;
      }
    } catch (err) {
      if (signal.aborted) throw cancelledError(signal);
      const error = attemptError(err, stall.signal);
      chain.report(provider, attempt, error);
      const step = nextStep(error);
      if (delivered || step === "throw") throw error;
      last = error;
      if (step === "skip") skip = index;
    } finally {
      watchdog.stop();
      if (!stall.signal.aborted) stall.abort(new TalkError("cancelled", "The attempt ended."));
      void it.return?.()?.catch(() => {});
    }
  }
  throw last ?? new TalkError("provider_unavailable", "No provider of the chain answered.");
}

/**
 * A streamed request hedged to the fallbacks: the default provider (with its
 * retries) runs first; when it has delivered nothing after `hedgeAfterMs`
 * (or has failed for good), the rest of the chain starts beside it, and the
 * first of the two to deliver is the one heard: the other is aborted. So a
 * hung request is replaced after `hedgeAfterMs`, not after its retries' stall
 * timeouts, and a merely slow one still wins if it answers first.
 */
async function* hedgedOverChain<P extends ProviderDescriptor, T>(
  chain: ProviderChain<P>,
  signal: AbortSignal,
  open: (provider: P, index: number, signal: AbortSignal) => AsyncIterable<T>,
  hedgeAfterMs: number,
): AsyncGenerator<T> {
  type Branch = { it: AsyncIterator<T>; stop: AbortController; next: Promise<IteratorResult<T>> };
  const branch = (only: (index: number) => boolean): Branch => {
    const stop = new AbortController();
    const it = streamOverChain(chain, AbortSignal.any([signal, stop.signal]), open, true, only)[
      Symbol.asyncIterator
    ]();
    const next = it.next();
    next.catch(() => undefined);
    return { it, stop, next };
  };
  const drop = (b: Branch): void => {
    b.stop.abort(new TalkError("cancelled", "The hedge was won by the other provider."));
    void b.it.return?.(undefined)?.catch(() => {});
  };
  const primary = branch((index) => index === 0);
  let hedge: Branch | undefined;
  const settled = (b: Branch) =>
    b.next.then(
      (r) => ({ b, r, err: undefined as unknown }),
      (err: unknown) => ({ b, r: undefined, err }),
    );
  let timer: NodeJS.Timeout | undefined;
  const hedgeDue = new Promise<"hedge">((resolve) => {
    timer = setTimeout(() => resolve("hedge"), hedgeAfterMs);
    timer.unref?.();
  });
  let winner: Branch | undefined;
  let first: IteratorResult<T> | undefined;
  try {
    const early = await Promise.race([settled(primary), hedgeDue]);
    if (early !== "hedge" && early.err === undefined) {
      winner = primary;
      first = early.r;
    } else {
      if (early !== "hedge" && (signal.aborted || nextStep(toTalkError(early.err)) === "throw"))
        throw early.err;
      hedge = branch((index) => index > 0);
      let racing: Branch[] = early === "hedge" ? [primary, hedge] : [hedge];
      let lastErr: unknown = early === "hedge" ? undefined : early.err;
      while (!winner && racing.length > 0) {
        const out = await Promise.race(racing.map(settled));
        if (out.err === undefined) {
          winner = out.b;
          first = out.r;
        } else {
          if (signal.aborted) throw out.err;
          lastErr = out.err;
          racing = racing.filter((b) => b !== out.b);
        }
      }
      if (!winner) throw lastErr;
    }
  } finally {
    clearTimeout(timer);
    for (const b of [primary, hedge]) if (b && b !== winner) drop(b);
  }
  const won = winner as Branch;
  try {
    if (first!.done) return;
    yield first!.value;
    for (;;) {
      const r = await won.it.next();
      if (r.done) return;
      yield r.value;
    }
  } finally {
    void won.it.return?.(undefined)?.catch(() => {});
  }
}

/** TTS over a chain (cloud TTS -> local engine): retries and fallback before the first audio, stall timeouts throughout. */
export class ResilientTts extends ProviderChain<TtsProvider> implements TtsProvider {
  readonly kind = "tts" as const;

  synthesize(request: TtsRequest): AsyncIterable<AudioChunk> {
    const open = (provider: TtsProvider, index: number, signal: AbortSignal): AsyncIterable<AudioChunk> => {
      // A fallback speaks in its own default voice: the primary's voice name means nothing to it.
      const { voice: _voice, ...rest } = request;
      return provider.synthesize({ ...(index === 0 ? request : rest), signal });
    };
    const hedgeAfterMs = this.hedgeAfterMs;
    return hedgeAfterMs > 0 && this.chain.length > 1 && this.chain[0]!.capabilities.local !== true
      ? hedgedOverChain(this, request.signal, open, hedgeAfterMs)
      : streamOverChain(this, request.signal, open, true);
  }
}

/**
 * An agent over a chain: a consult that fails before its first token is
 * retried and failed over (nothing was said yet). A remote agent's first
 * token is due within firstByteTimeoutMs of the request, so an endpoint that
 * accepts the request and never answers is a stall (retried, then thrown as
 * `timeout` with `details.stall`), not silence until agent.consultTimeoutMs;
 * once tokens flow, a gap past interChunkTimeoutMs fails it. The whole
 * answer's limit stays the provider's own (agent.endpoint.timeoutMs).
 */
export class ResilientAgent extends ProviderChain<AgentProvider> implements AgentProvider {
  readonly kind = "agent" as const;

  consult(request: AgentConsultRequest): AsyncIterable<AgentDelta> {
    return streamOverChain(
      this,
      request.signal,
      (provider, _index, signal) => provider.consult({ ...request, signal }),
      true,
    );
  }
}

/** STT over a chain: the turn's audio is kept, so a failed or stalled recognition is replayed into a retry or a fallback. */
export class ResilientStt extends ProviderChain<SttProvider> implements SttProvider {
  readonly kind = "stt" as const;

  startStream(options: SttStreamOptions): SttStream {
    return new ResilientSttStream(this, options);
  }
}

interface SttAttempt {
  provider: SttProvider;
  index: number;
  attempt: number;
  stream: SttStream | undefined;
  converter: PcmConverter | undefined;
  stall: AbortController;
  watchdog: StallWatchdog;
  failed: TalkError | undefined;
}

class ResilientSttStream implements SttStream {
  readonly #chain: ResilientStt;
  readonly #options: SttStreamOptions;
  readonly #plan: Generator<{ provider: SttProvider; index: number; attempt: number }>;
  readonly #kept: Int16Array[] = [];
  #keptSamples = 0;
  #overflow = false;
  #current: SttAttempt;

  constructor(chain: ResilientStt, options: SttStreamOptions) {
    this.#chain = chain;
    this.#options = options;
    this.#plan = chain.attempts();
    this.#current = this.#open(this.#plan.next().value!);
  }

  write(pcm: Int16Array): void {
    if (this.#options.signal.aborted) throw cancelledError(this.#options.signal);
    if (!this.#overflow) {
      const limit = STT_REPLAY_SECONDS * this.#options.format.sampleRate * this.#options.format.channels;
      if (this.#keptSamples + pcm.length > limit) {
        this.#overflow = true;
        this.#kept.length = 0;
      } else {
        this.#kept.push(pcm.slice());
        this.#keptSamples += pcm.length;
      }
    }
    this.#feed(this.#current, pcm);
  }

  pause(): void {
    this.#tell((s) => s.pause?.());
  }

  resume(): void {
    this.#tell((s) => s.resume?.());
  }

  /** A pause or its end, told to the current attempt's stream (a retry replays the audio, not these). */
  #tell(what: (stream: SttStream) => void): void {
    const a = this.#current;
    if (!a.stream || a.failed) return;
    try {
      what(a.stream);
    } catch (err) {
      a.failed = toTalkError(err, "provider_error");
    }
  }

  async finish(): Promise<SttResult> {
    const { signal } = this.#options;
    let skip = -1;
    for (;;) {
      const a = this.#current;
      try {
        const result = await this.#hedged(a);
        this.#chain.delivered(this.#current.provider);
        return result;
      } catch (err) {
        if (signal.aborted) throw cancelledError(signal);
        const error = a.failed ?? attemptError(err, a.stall.signal);
        this.#chain.report(a.provider, a.attempt, error);
        const step = nextStep(error);
        if (step === "throw" || this.#overflow) throw error;
        if (step === "skip") skip = a.index;
        let next = this.#plan.next();
        while (!next.done && next.value.index === skip) next = this.#plan.next();
        if (next.done) throw error;
        await this.#chain.wait(next.value.attempt, signal);
        this.#current = this.#open(next.value);
        for (const pcm of this.#kept) this.#feed(this.#current, pcm);
      } finally {
        a.watchdog.stop();
        a.converter?.close();
      }
    }
  }

  /**
   * The result of `a`, hedged: when the default provider's first try has
   * answered nothing `hedgeAfterMs` after the end of the audio, the first
   * fallback starts beside it on the kept audio, and the first result wins
   * (the other attempt is stopped). Without a fallback, a hedge, or the audio
   * kept, it is `a`'s result alone.
   */
  #hedged(a: SttAttempt): Promise<SttResult> {
    const hedgeAfterMs = this.#chain.hedgeAfterMs;
    const fallback = this.#chain.chain.findIndex((_p, index) => index > a.index);
    const primary = this.#finish(a);
    if (
      hedgeAfterMs <= 0 ||
      a.index !== 0 ||
      a.attempt !== 0 ||
      fallback < 0 ||
      this.#overflow ||
      a.provider.capabilities.local === true
    )
      return primary;
    return new Promise<SttResult>((resolve, reject) => {
      let hedge: SttAttempt | undefined;
      let pending = 1;
      let done = false;
      const win = (attempt: SttAttempt, result: SttResult): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        for (const other of [a, hedge])
          if (other && other !== attempt && !other.stall.signal.aborted)
            other.stall.abort(new TalkError("cancelled", "The hedge was won by the other provider."));
        if (attempt !== a) this.#current = attempt;
        resolve(result);
      };
      const lose = (attempt: SttAttempt, err: unknown): void => {
        if (done) return;
        if (attempt !== a)
          this.#chain.report(attempt.provider, attempt.attempt, attemptError(err, attempt.stall.signal));
        if (--pending > 0) return;
        done = true;
        clearTimeout(timer);
        // Both failed (or the primary before the hedge): the retry loop goes on from the primary's failure.
        if (hedge) {
          hedge.watchdog.stop();
          hedge.converter?.close();
        }
        reject(err);
      };
      const timer = setTimeout(() => {
        if (done || this.#options.signal.aborted) return;
        pending++;
        const b = (hedge = this.#open({
          provider: this.#chain.chain[fallback]!,
          index: fallback,
          attempt: 0,
        }));
        for (const pcm of this.#kept) this.#feed(b, pcm);
        this.#finish(b).then(
          (result) => {
            b.watchdog.stop();
            b.converter?.close();
            win(b, result);
          },
          (err: unknown) => lose(b, err),
        );
      }, hedgeAfterMs);
      timer.unref?.();
      primary.then(
        (result) => win(a, result),
        (err: unknown) => lose(a, err),
      );
    });
  }

  #open(step: { provider: SttProvider; index: number; attempt: number }): SttAttempt {
    const { provider } = step;
    const stall = new AbortController();
    const signal = AbortSignal.any([this.#options.signal, stall.signal]);
    const watchdog = this.#chain.guard(
      provider,
      (e) => stall.abort(e),
      `stt provider ${provider.id}`,
      step.attempt,
    );
    const wanted = provider.capabilities.inputFormats;
    const format =
      !wanted || wanted.length === 0 || wanted.some((f) => sameAudioFormat(f, this.#options.format))
        ? this.#options.format
        : (wanted.find((f) => f.encoding === "pcm16") ?? this.#options.format);
    const attempt: SttAttempt = {
      ...step,
      stream: undefined,
      converter: sameAudioFormat(format, this.#options.format)
        ? undefined
        : new PcmConverter(this.#options.format, format),
      stall,
      watchdog,
      failed: undefined,
    };
    try {
      attempt.stream = provider.startStream({
        ...this.#options,
        format,
        signal,
        onPartial: (text) => {
          watchdog.progress();
          if (attempt === this.#current) this.#options.onPartial?.(text);
        },
      });
    } catch (err) {
      attempt.failed = toTalkError(err, "provider_unavailable");
    }
    return attempt;
  }

  #feed(a: SttAttempt, pcm: Int16Array): void {
    if (!a.stream || a.failed) return;
    try {
      const data = a.converter ? a.converter.convert(pcm) : pcm;
      if (data.length > 0) a.stream.write(data);
    } catch (err) {
      a.failed = toTalkError(err, "provider_error");
    }
  }

  async #finish(a: SttAttempt): Promise<SttResult> {
    if (a.failed || !a.stream) throw a.failed ?? new TalkError("provider_unavailable");
    if (a.converter) {
      const tail = a.converter.flush();
      if (tail.length > 0) a.stream.write(tail);
    }
    // From the end of the audio: the result (or a first partial) is due within firstByteTimeoutMs.
    a.watchdog.expect();
    const signal = AbortSignal.any([this.#options.signal, a.stall.signal]);
    return await raceAbort(a.stream.finish(), signal);
  }
}
