/**
 * Gives back to the kernel the memory the process's native side freed.
 *
 * Socket read buffers and ArrayBuffer backing stores come from glibc's
 * malloc. After a burst (a thousand calls streaming) they are freed, but
 * glibc returns memory to the kernel by itself only from the top of its
 * heap: the freed pages in the middle stay resident, so the process's RSS
 * keeps the burst's peak while its live memory is a fraction of it. Measured
 * (bench/telephony-memory.bench.ts, 500 held relay calls): 49 MB of a 58 MB
 * main heap free but resident; one malloc_trim(0) gave back 63 MB of RSS.
 *
 * A MemoryTrimmer checks every `intervalMs` (one unref'd timer per process)
 * how much free memory glibc holds (mallinfo2) and, from `minFreeBytes` up,
 * calls malloc_trim(0) through the N-API binding in native/malloc-trim
 * (built by scripts/setup.sh). Where the binding is not built, or the C
 * library is not glibc, there is nothing to trim and no trimmer.
 */
import { createRequire } from "node:module";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";

/** glibc's malloc statistics (mallinfo2), bytes. */
export interface MallocInfo {
  /** The sbrk heap and the thread arenas. */
  heapBytes: number;
  inUseBytes: number;
  /** Free inside heapBytes: what a trim can give back (whole pages of it). */
  freeBytes: number;
  /** Blocks glibc mmapped on their own (returned to the kernel when freed). */
  mmapBytes: number;
}

export interface NativeMemoryBinding {
  /** malloc_trim(0): true when memory was released. */
  trim(): boolean;
  /** mallinfo2(), or null where the C library is not glibc. */
  info(): MallocInfo | null;
}

let loaded: { binding: NativeMemoryBinding | undefined; error?: string } | undefined;

/** The binding when it is built and the C library is glibc; else undefined and why (`nativeMemoryUnavailable`). */
export function nativeMemoryBinding(): NativeMemoryBinding | undefined {
  if (!loaded) {
    try {
      const binding = createRequire(import.meta.url)(
        "../../native/malloc-trim/build/Release/malloc_trim.node",
      ) as NativeMemoryBinding;
      loaded =
        binding.info() === null ? { binding: undefined, error: "the C library is not glibc" } : { binding };
    } catch (err) {
      loaded = { binding: undefined, error: err instanceof Error ? err.message : String(err) };
    }
  }
  return loaded.binding;
}

/** Why there is no binding (undefined when there is one). */
export function nativeMemoryUnavailable(): string | undefined {
  nativeMemoryBinding();
  return loaded?.error;
}

export interface MemoryTrimmerOptions {
  binding: NativeMemoryBinding;
  /** Between checks, ms (> 0). */
  intervalMs: number;
  /** Trim only when glibc holds at least this much free memory, bytes. */
  minFreeBytes: number;
  logger?: Logger | undefined;
  /** The process's resident set, bytes (tests). Default process.memoryUsage.rss. */
  rss?: () => number;
}

export interface MemoryTrimStats {
  checks: number;
  trims: number;
  /** RSS the trims gave back, bytes (resident before minus after each trim). */
  releasedBytes: number;
  /** Time spent in malloc_trim, ms. */
  trimMs: number;
  /** glibc's free bytes at the last check. */
  lastFreeBytes: number;
}

export class MemoryTrimmer {
  readonly #o: MemoryTrimmerOptions;
  readonly #rss: () => number;
  readonly #timer: NodeJS.Timeout;
  #closed = false;
  readonly stats: MemoryTrimStats = { checks: 0, trims: 0, releasedBytes: 0, trimMs: 0, lastFreeBytes: 0 };

  constructor(options: MemoryTrimmerOptions) {
    if (!Number.isInteger(options.intervalMs) || options.intervalMs <= 0)
      throw new RangeError(`MemoryTrimmer: intervalMs must be a positive integer, got ${options.intervalMs}`);
    if (!Number.isFinite(options.minFreeBytes) || options.minFreeBytes < 0)
      throw new RangeError(`MemoryTrimmer: minFreeBytes must be >= 0, got ${options.minFreeBytes}`);
    this.#o = options;
    this.#rss = options.rss ?? (() => process.memoryUsage.rss());
    // The process's only trim timer; it never keeps the process alive.
    this.#timer = setInterval(() => this.check(), options.intervalMs);
    this.#timer.unref();
  }

  /** One check: trims when glibc holds at least minFreeBytes free. Returns whether it trimmed. */
  check(): boolean {
    if (this.#closed) return false;
    this.stats.checks++;
    const info = this.#o.binding.info();
    if (!info) return false;
    this.stats.lastFreeBytes = info.freeBytes;
    if (info.freeBytes < this.#o.minFreeBytes) return false;
    const before = this.#rss();
    const started = performance.now();
    this.#o.binding.trim();
    const ms = performance.now() - started;
    const released = Math.max(0, before - this.#rss());
    this.stats.trims++;
    this.stats.trimMs += ms;
    this.stats.releasedBytes += released;
    this.#o.logger?.debug(
      { freeBytes: info.freeBytes, releasedBytes: released, ms: Math.round(ms * 10) / 10 },
      "native memory trimmed",
    );
    return true;
  }

  /** Stops the checks. Idempotent. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
}

/** /metrics: glibc's free memory now, and what the trims gave back. */
export function registerNativeMemoryMetrics(registry: Registry, trimmer: MemoryTrimmer): void {
  new Gauge({
    name: "talkgate_malloc_free_bytes",
    help: "Memory glibc's malloc holds free (resident until trimmed), at the last trim check",
    registers: [registry],
    collect() {
      this.set(trimmer.stats.lastFreeBytes);
    },
  });
  new Counter({
    name: "talkgate_malloc_trim_released_bytes_total",
    help: "Resident memory given back to the kernel by malloc_trim",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(trimmer.stats.releasedBytes);
    },
  });
}
