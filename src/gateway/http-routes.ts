import type { FastifyPluginAsync } from "fastify";
import { redactText } from "../config/index.js";
import type { GatewayState } from "./gateway-state.js";

/**
 * Operational HTTP routes. Unauthenticated on purpose (load balancers and
 * Prometheus scrape them) and free of secrets and session ids.
 */
export function httpRoutes(state: GatewayState): FastifyPluginAsync {
  return async (app) => {
    // Liveness: the process answers. Never depends on providers.
    app.get("/healthz", async () => ({ ok: true, status: state.accepting ? "ready" : "closing" }));

    // Readiness: providers and the coordinator can take work, and we are not draining.
    app.get("/readyz", async (_request, reply) => {
      let report: Awaited<ReturnType<typeof state.deps.readiness>>;
      try {
        report = await state.deps.readiness();
      } catch (err) {
        // A failing probe's message may quote a URL: the one redaction applies here too.
        const detail = redactText(err instanceof Error ? err.message : String(err));
        report = { ok: false, checks: { readiness: { ok: false, detail } } };
      }
      const gateway = state.accepting ? { ok: true } : { ok: false, detail: "shutting down" };
      const ok = report.ok && gateway.ok;
      return reply.code(ok ? 200 : 503).send({ ok, checks: { ...report.checks, gateway } });
    });

    app.get("/metrics", async (_request, reply) => {
      const body = await state.metrics.exposition();
      return reply.header("content-type", state.metrics.registry.contentType).send(body);
    });
  };
}
