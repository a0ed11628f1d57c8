import type { FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";
import type { CallControlRegistry } from "../core/index.js";
import type { SurfaceContext } from "../gateway/index.js";
import { adminRoutes, registerAdminMethods } from "./admin-api.js";
import { AdminService } from "./admin-service.js";
import { LiveSessions } from "./live-sessions.js";
import type { OpsCluster } from "./ops-cluster.js";
import { OpsMetrics } from "./ops-metrics.js";
import type { ProviderProbes } from "./provider-probes.js";
import { SessionTracer } from "./session-tracer.js";
import { createTraceProvider } from "./trace-provider.js";

export interface OpsPluginOptions {
  cluster: OpsCluster;
  /** Phone calls' controls, so an operator's close hangs a call up at the carrier. */
  callControls?: CallControlRegistry | undefined;
  /** The registry /metrics serves (the gateway's): latency histograms, live gauges, process metrics. */
  registry: Registry;
  /** Where the pipelines' providers report their calls (made before the pipelines, filled here). */
  probes: ProviderProbes;
  /** Where the OTEL_* variables are read (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** What the operations surface offers the composition root once registered. */
export interface OpsSurface {
  readonly admin: AdminService;
  readonly live: LiveSessions;
  readonly metrics: OpsMetrics;
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
  const live = new LiveSessions(ctx.runtime, options.cluster.workerId);
  const admin = new AdminService({
    cluster: options.cluster,
    live,
    runtime: ctx.runtime,
    callControls: options.callControls,
    logger: ctx.logger,
  });
  registerAdminMethods(ctx, admin);
  const metrics = new OpsMetrics({
    registry: options.registry,
    runtime: ctx.runtime,
    live,
    workerId: options.cluster.workerId,
  });
  const offMetrics = options.probes.add(metrics);
  const workerId = options.cluster.workerId;
  const traces = createTraceProvider(options.env ?? process.env, workerId, ctx.logger);
  const tracer = traces && new SessionTracer(traces.getTracer("talkgate"), ctx.runtime, workerId);
  const offTracer = tracer ? options.probes.add(tracer) : () => {};
  let closing: Promise<void> | undefined;
  const surface: OpsSurface = {
    admin,
    live,
    metrics,
    close() {
      closing ??= (async () => {
        offMetrics();
        offTracer();
        metrics.close();
        admin.close();
        live.close();
        tracer?.close();
        await traces
          ?.shutdown()
          .catch((err: unknown) => ctx.logger.warn({ err }, "tracing: the last spans were not exported"));
      })();
      return closing;
    },
  };
  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(adminRoutes(ctx, admin));
    app.addHook("onClose", () => surface.close());
  };
  return { plugin, surface };
}
