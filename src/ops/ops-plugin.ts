import { z } from "zod";
import { join } from "node:path";
import type { FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";
import type { CallControlRegistry } from "../core/index.js";
import type { SurfaceContext } from "../gateway/index.js";
import { adminRoutes, registerAdminMethods } from "./admin-api.js";
import { recordingRoutes, registerRecordingMethods } from "./recordings-api.js";
import { AdminService } from "./admin-service.js";
import { LiveSessions } from "./live-sessions.js";
import type { OpsCluster } from "./ops-cluster.js";
import { OpsMetrics } from "./ops-metrics.js";
import type { ProviderProbes } from "./provider-probes.js";
import { SessionTracer } from "./session-tracer.js";
import { RetentionSweeper } from "./retention.js";
import { RecentActivity } from "./recent-activity.js";
import { SessionFollows } from "./session-follow.js";
import { UsageLedger } from "./usage-ledger.js";
import type { PriceTable } from "./usage-record.js";
import type { TracerProvider } from "@opentelemetry/sdk-trace";

export interface OpsPluginOptions {
  cluster: OpsCluster;
  /** Phone calls' controls, so an operator's close hangs a call up at the carrier. */
  callControls?: CallControlRegistry | undefined;
  /** The registry /metrics serves (the gateway's): latency histograms, live gauges, process metrics. */
  registry: Registry;
  /** Where the pipelines' providers report their calls (made before the pipelines, filled here). */
  probes: ProviderProbes;
  /** The process's tracer provider (createTraceProvider, from the OTEL_* variables); none: no tracing. Shut down with the surface. */
  traces?: TracerProvider | undefined;
  /** The data directory: usage/ (the ledger) and the files retention sweeps. */
  dataDir: string;
  /** Prices for the ledger's cost estimate (config `ops.usage`). */
  usage: PriceTable;
  /** Days kept per kind (config `ops.retentionDays`; 0 = forever). */
  retentionDays: { sessionLogs: number; transcripts: number; recordings: number; ledger: number };
  /** How often the event loop's delay is sampled for /metrics, ms (config `ops.eventLoopSampleMs`). */
  eventLoopSampleMs?: number;
}

/** What the operations surface offers the composition root once registered. */
export interface OpsSurface {
  readonly admin: AdminService;
  readonly live: LiveSessions;
  readonly metrics: OpsMetrics;
  readonly ledger: UsageLedger;
  readonly retention: RetentionSweeper;
  /** Ends open spans and flushes the trace exporter. Idempotent. */
  close(): Promise<void>;
}

/**
 * The operations surface: the cluster-wide admin API (Talk API `admin.*`
 * methods and `/admin/*` routes) and the latency histograms, live gauges and
 * process metrics on /metrics. One encapsulated plugin over the surface
 * context; its parts close with the server.
 */
export function opsPlugin(
  ctx: SurfaceContext,
  options: OpsPluginOptions,
): { plugin: FastifyPluginAsync; surface: OpsSurface } {
  const activity = new RecentActivity(ctx.runtime, options.cluster.workerId);
  const offActivity = options.probes.add(activity);
  const live = new LiveSessions(ctx.runtime, options.cluster.workerId, activity);
  const follows = new SessionFollows(options.cluster, ctx.logger);
  const usageDir = join(options.dataDir, "usage");
  const ledger = new UsageLedger({
    runtime: ctx.runtime,
    dir: usageDir,
    workerId: options.cluster.workerId,
    prices: options.usage,
    logger: ctx.logger,
  });
  const offLedger = options.probes.add(ledger);
  const days = options.retentionDays;
  const retention = new RetentionSweeper(
    [
      {
        kind: "sessionLogs",
        dir: join(options.dataDir, "sessions"),
        days: days.sessionLogs,
        match: /\.jsonl$/,
      },
      {
        kind: "transcripts",
        dir: join(options.dataDir, "meetings"),
        days: days.transcripts,
        match: /\.transcript\.jsonl$/,
      },
      { kind: "recordings", dir: join(options.dataDir, "recordings"), days: days.recordings, match: /./ },
      { kind: "ledger", dir: usageDir, days: days.ledger, match: /^\d{4}-\d{2}-\d{2}\..+\.jsonl$/ },
    ],
    ctx.logger,
  );
  void retention.sweep();
  const admin = new AdminService({
    ledger,
    cluster: options.cluster,
    live,
    activity,
    runtime: ctx.runtime,
    callControls: options.callControls,
    logger: ctx.logger,
  });
  registerAdminMethods(ctx, admin, follows);
  const recordings = join(options.dataDir, "recordings");
  registerRecordingMethods(ctx, recordings);
  const metrics = new OpsMetrics({
    registry: options.registry,
    runtime: ctx.runtime,
    live,
    workerId: options.cluster.workerId,
    eventLoopSampleMs: options.eventLoopSampleMs,
  });
  const offMetrics = options.probes.add(metrics);
  // This worker's meeting bots: join attempts and outcomes per platform and sub-code (the console's panel).
  ctx.registerMethod("admin.meetings.joins", {
    scope: "admin",
    params: z.object({}).strict(),
    handler: () => ({ workerId: options.cluster.workerId, platforms: metrics.joins.snapshot() }),
  });
  const workerId = options.cluster.workerId;
  const traces = options.traces;
  const tracer = traces && new SessionTracer(traces.getTracer("talkgate"), ctx.runtime, workerId);
  const offTracer = tracer ? options.probes.add(tracer) : () => {};
  let closing: Promise<void> | undefined;
  const surface: OpsSurface = {
    admin,
    live,
    metrics,
    ledger,
    retention,
    close() {
      closing ??= (async () => {
        offMetrics();
        offActivity();
        follows.close();
        offLedger();
        retention.close();
        offTracer();
        metrics.close();
        admin.close();
        live.close();
        activity.close();
        tracer?.close();
        await ledger.close();
        await traces
          ?.shutdown()
          .catch((err: unknown) => ctx.logger.warn({ err }, "tracing: the last spans were not exported"));
      })();
      return closing;
    },
  };
  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(adminRoutes(ctx, admin));
    await app.register(recordingRoutes(ctx, recordings));
    app.addHook("onClose", () => surface.close());
  };
  return { plugin, surface };
}
