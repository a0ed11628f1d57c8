import { afterEach, describe, expect, it, vi } from "vitest";
import { validateConfig } from "../config/load-config.js";
import {
  MemoryTrimmer,
  nativeMemoryBinding,
  type MallocInfo,
  type NativeMemoryBinding,
} from "./native-memory.js";

/** A malloc whose free memory the test sets; a trim gives it back and the RSS drops by as much. */
function fakeMalloc(freeBytes: number) {
  const state = { freeBytes, rss: 200 * 1024 * 1024, trims: 0 };
  const binding: NativeMemoryBinding = {
    info: (): MallocInfo => ({
      heapBytes: 64 << 20,
      inUseBytes: 8 << 20,
      freeBytes: state.freeBytes,
      mmapBytes: 0,
    }),
    trim: () => {
      state.trims++;
      state.rss -= state.freeBytes;
      state.freeBytes = 0;
      return true;
    },
  };
  const rss = (): number => state.rss;
  /** A trimmer over this malloc. */
  const trimmer = (intervalMs: number, minFreeBytes: number): MemoryTrimmer =>
    new MemoryTrimmer({ binding, intervalMs, minFreeBytes, rss });
  return { state, binding, trimmer };
}

describe("MemoryTrimmer", () => {
  afterEach(() => vi.useRealTimers());

  it("trims from minFreeBytes up and counts the RSS given back", () => {
    const m = fakeMalloc(4 << 20);
    const trimmer = m.trimmer(1000, 8 << 20);
    expect(trimmer.check()).toBe(false);
    expect(m.state.trims).toBe(0);
    expect(trimmer.stats.lastFreeBytes).toBe(4 << 20);
    m.state.freeBytes = 48 << 20;
    expect(trimmer.check()).toBe(true);
    expect(m.state.trims).toBe(1);
    expect(trimmer.stats).toMatchObject({
      checks: 2,
      trims: 1,
      releasedBytes: 48 << 20,
      lastFreeBytes: 48 << 20,
    });
    trimmer.close();
  });

  it("checks on its interval until closed; close is idempotent", () => {
    vi.useFakeTimers();
    const m = fakeMalloc(16 << 20);
    const trimmer = m.trimmer(10_000, 1 << 20);
    vi.advanceTimersByTime(9_999);
    expect(trimmer.stats.checks).toBe(0);
    vi.advanceTimersByTime(1);
    expect(trimmer.stats).toMatchObject({ checks: 1, trims: 1 });
    m.state.freeBytes = 2 << 20;
    vi.advanceTimersByTime(10_000);
    expect(trimmer.stats).toMatchObject({ checks: 2, trims: 2 });
    trimmer.close();
    trimmer.close();
    m.state.freeBytes = 32 << 20;
    vi.advanceTimersByTime(60_000);
    expect(trimmer.check()).toBe(false);
    expect(trimmer.stats.checks).toBe(2);
  });

  it("refuses an interval or threshold that is not one", () => {
    const { binding } = fakeMalloc(0);
    expect(() => new MemoryTrimmer({ binding, intervalMs: 0, minFreeBytes: 0 })).toThrow(/intervalMs/);
    expect(() => new MemoryTrimmer({ binding, intervalMs: 1.5, minFreeBytes: 0 })).toThrow(/intervalMs/);
    expect(() => new MemoryTrimmer({ binding, intervalMs: 10, minFreeBytes: -1 })).toThrow(/minFreeBytes/);
  });
});

describe("the malloc_trim binding (native/malloc-trim, built by scripts/setup.sh)", () => {
  it("reads glibc's statistics and trims on this machine", () => {
    const binding = nativeMemoryBinding();
    expect(binding, "native/malloc-trim is not built: run scripts/setup.sh").toBeDefined();
    const info = binding!.info()!;
    for (const key of ["heapBytes", "inUseBytes", "freeBytes", "mmapBytes"] as const) {
      expect(Number.isFinite(info[key]) && info[key] >= 0, key).toBe(true);
    }
    expect(info.heapBytes).toBeGreaterThanOrEqual(info.inUseBytes);
    expect(typeof binding!.trim()).toBe("boolean");
  });
});

describe("runtime.mallocTrimIntervalMs", () => {
  it("defaults to 10 s, takes 0 (off), and refuses a bad value naming the key", () => {
    expect(validateConfig({}, { env: {} }).config.runtime).toMatchObject({
      mallocTrimIntervalMs: 10_000,
      mallocTrimMinFreeBytes: 8 * 1024 * 1024,
    });
    expect(
      validateConfig({ runtime: { mallocTrimIntervalMs: 0 } }, { env: {} }).config.runtime
        .mallocTrimIntervalMs,
    ).toBe(0);
    for (const bad of [-1, 1.5, 3_600_001, "10s"])
      expect(() => validateConfig({ runtime: { mallocTrimIntervalMs: bad } }, { env: {} })).toThrow(
        /runtime\.mallocTrimIntervalMs/,
      );
    expect(() => validateConfig({ runtime: { mallocTrimMinFreeBytes: -1 } }, { env: {} })).toThrow(
      /runtime\.mallocTrimMinFreeBytes/,
    );
  });
});
