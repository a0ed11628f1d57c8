import { availableParallelism } from "node:os";

/**
 * Process CPU use between two samples, as a share of the machine (0..1), for
 * the load a worker advertises. Sampled at heartbeat time, never per frame.
 */
export class CpuSampler {
  #lastUsage = process.cpuUsage();
  #lastAt = performance.now();
  readonly #cores = Math.max(1, availableParallelism());

  sample(): number {
    const usage = process.cpuUsage(this.#lastUsage);
    const now = performance.now();
    const elapsedUs = (now - this.#lastAt) * 1000;
    this.#lastUsage = process.cpuUsage();
    this.#lastAt = now;
    if (elapsedUs <= 0) return 0;
    const share = (usage.user + usage.system) / elapsedUs / this.#cores;
    return Math.min(1, Math.max(0, Math.round(share * 1000) / 1000));
  }
}
