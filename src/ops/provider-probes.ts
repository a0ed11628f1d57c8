import type { TalkLogger } from "../core/index.js";
import type { ProviderCall, ProviderCallTrace, ProviderObserver } from "./provider-probe.js";

/**
 * The one observer the pipelines' providers report to (provider-probe.ts),
 * fanning out to metrics, traces and the usage ledger as they are added. Made
 * before the pipelines (the composition root wraps their providers with it),
 * filled once the operations surface starts. An observer that throws is
 * logged and never breaks the call.
 */
export class ProviderProbes implements ProviderObserver {
  readonly #observers = new Set<ProviderObserver>();
  readonly #logger: TalkLogger;

  constructor(logger: TalkLogger) {
    this.#logger = logger;
  }

  add(observer: ProviderObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  connected(call: ProviderCall, ms: number, ok: boolean): void {
    for (const o of this.#observers) this.#safe(() => o.connected(call, ms, ok));
  }

  inputAudio(call: ProviderCall, seconds: number): void {
    for (const o of this.#observers) this.#safe(() => o.inputAudio?.(call, seconds));
  }

  call(call: ProviderCall): ProviderCallTrace {
    const traces: ProviderCallTrace[] = [];
    for (const o of this.#observers) {
      const trace = this.#safe(() => o.call(call));
      if (trace) traces.push(trace);
    }
    let first = false;
    let ended = false;
    return {
      first: () => {
        if (first || ended) return;
        first = true;
        for (const t of traces) this.#safe(() => t.first());
      },
      end: (outcome, units) => {
        if (ended) return;
        ended = true;
        for (const t of traces) this.#safe(() => t.end(outcome, units));
      },
    };
  }

  #safe<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.#logger.warn({ err }, "ops: a provider observer failed");
      return undefined;
    }
  }
}
