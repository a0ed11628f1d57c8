/**
 * Runs a bench script in several fresh child processes (JIT, GC and heap
 * start clean in each) and takes the median of each figure, so one noisy
 * neighbour on a shared machine does not decide a ratio.
 */
import { execFileSync } from "node:child_process";

export type Figures = Record<string, number>;

export function medianOfChildren(
  script: string,
  args: readonly string[],
  processes: number,
  onChild?: (i: number) => void,
): Figures {
  const runs: Figures[] = [];
  for (let i = 0; i < processes; i++) {
    onChild?.(i);
    const out = execFileSync(process.execPath, ["--import", "tsx", script, ...args], {
      maxBuffer: 1 << 26,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const line = out.toString().trim().split("\n").at(-1)!;
    runs.push(JSON.parse(line) as Figures);
  }
  const medians: Figures = {};
  for (const key of Object.keys(runs[0]!)) medians[key] = median(runs.map((r) => r[key]!));
  return medians;
}

/**
 * Calls per second of each step, measured in `rounds` interleaved slices
 * (ours, peer, ours, peer, ...) so that load from other processes falls on
 * both sides of a ratio alike; the median slice counts.
 */
export function rates(steps: Record<string, () => unknown>, ms: number, rounds = 7): Record<string, number> {
  const names = Object.keys(steps);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) spin(steps[n]!, ms / rounds / 2);
  for (let r = 0; r < rounds; r++) for (const n of names) samples[n]!.push(spin(steps[n]!, ms / rounds));
  return Object.fromEntries(names.map((n) => [n, median(samples[n]!)]));
}

function spin(step: () => unknown, ms: number): number {
  let calls = 0;
  const start = performance.now();
  let now = start;
  // Steps are coarse (a second of audio each), so reading the clock after every call costs nothing.
  do {
    step();
    calls++;
    now = performance.now();
  } while (now - start < ms);
  return (calls * 1000) / (now - start);
}

export function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}
