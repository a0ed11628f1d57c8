import type { FastifyPluginAsync } from "fastify";
import type { CallControlRegistry } from "../core/index.js";
import type { SurfaceContext } from "../gateway/index.js";
import { adminRoutes, registerAdminMethods } from "./admin-api.js";
import { AdminService } from "./admin-service.js";
import { LiveSessions } from "./live-sessions.js";
import type { OpsCluster } from "./ops-cluster.js";

export interface OpsPluginOptions {
  cluster: OpsCluster;
  /** Phone calls' controls, so an operator's close hangs a call up at the carrier. */
  callControls?: CallControlRegistry | undefined;
}

/** What the operations surface offers the composition root once registered. */
export interface OpsSurface {
  readonly admin: AdminService;
  readonly live: LiveSessions;
  close(): void;
}

/**
 * The operations surface: the cluster-wide admin API (Talk API `admin.*`
 * methods and `/admin/*` routes). One encapsulated plugin over the surface
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
  let closed = false;
  const surface: OpsSurface = {
    admin,
    live,
    close() {
      if (closed) return;
      closed = true;
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
