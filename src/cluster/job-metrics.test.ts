import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessJobQueue } from "./in-process-job-queue.js";
import { JobMetrics } from "./job-metrics.js";

let queue: InProcessJobQueue | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
});

describe("JobMetrics", () => {
  it("counts job outcomes by kind from before it is registered, and shows them on the registry it joins", async () => {
    queue = new InProcessJobQueue({ kinds: ["outbound-call"], attempts: 2, retryDelayMs: 0 });
    await queue.start();
    const metrics = new JobMetrics(queue);
    const done = new Promise<void>((resolve) => queue?.on("job", (e) => e.type === "failed" && resolve()));
    queue.process("outbound-call", async () => {
      throw new Error("no route");
    });
    await queue.enqueue("outbound-call", {});
    await done;

    const registry = new Registry();
    metrics.register(registry);
    metrics.register(registry);
    const text = await registry.metrics();
    expect(text).toContain('talkgate_jobs_total{kind="outbound-call",outcome="retried"} 1');
    expect(text).toContain('talkgate_jobs_total{kind="outbound-call",outcome="failed"} 1');
    metrics.close();
  });
});
