import { Counter, type Registry } from "prom-client";
import type { JobOutcome } from "./job-outcome.js";

const NAME = "talkgate_jobs_total";

/**
 * `talkgate_jobs_total{kind,outcome}`: job transitions on this worker
 * (completed, failed, cancelled, retried, stalled). Each transition is
 * reported by exactly one worker, so a sum over workers is the cluster total.
 * Counts from construction; the app registers it on whatever registry it
 * exposes (the Gateway's /metrics), so the cluster never imports the Gateway.
 */
export class JobMetrics {
  readonly counter = new Counter<"kind" | "outcome">({
    name: NAME,
    help: "Job transitions on this worker, by kind and outcome (completed, failed, cancelled, retried, stalled)",
    labelNames: ["kind", "outcome"],
    registers: [],
  });
  readonly #off: () => void;

  constructor(source: { on(type: "outcome", listener: (outcome: JobOutcome) => void): () => void }) {
    this.#off = source.on("outcome", (o) => this.counter.inc({ kind: o.kind, outcome: o.outcome }));
  }

  /** Adds the counter to `registry` (idempotent per registry). */
  register(registry: Registry): void {
    if (!registry.getSingleMetric(NAME)) registry.registerMetric(this.counter);
  }

  close(): void {
    this.#off();
  }
}
