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

export interface OpsPluginOptions {
  cluster: OpsCluster;
  /** Phone calls' controls, so an operator's close hangs a call up at the carrier. */
  callControls?: CallControlRegistry | undefined;
  /** The registry /metrics serves (the gateway's): latency histograms, live gauges, process metrics. */
  registry: Registry;
  /** Where the pipelines' providers report their calls (made before the pipelines, filled here). */
  probes: ProviderProbes;
}

/** What the operations surface offers the composition root once registered. */
export interface OpsSurface {
  readonly admin: AdminService;
  readonly live: LiveSessions;
  readonly metrics: OpsMetrics;
  close(): void;
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
  let closed = false;
  const surface: OpsSurface = {
    admin,
    live,
    metrics,
    close() {
      if (closed) return;
      closed = true;
      offMetrics();
      metrics.close();
      admin.close();
      live.close();
    },
  };
  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(adminRoutes(ctx, admin));
    app.addHook("onClose", async () => surface.close());
  };
  return { plugin, surface };
}
