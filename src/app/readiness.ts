import type { AppCluster } from "../app-cluster.js";
import type { ProviderRegistry } from "../core/provider-registry.js";
import type { ReadinessReport } from "../gateway/index.js";

/** `GET /readyz`: the coordinator and every provider's health check, one entry each. */
export function readinessProbe(
  registry: ProviderRegistry,
  cluster: Pick<AppCluster, "ready">,
): () => Promise<ReadinessReport> {
  return async () => {
    const health = await registry.health();
    const coordinator = cluster.ready();
    const checks: ReadinessReport["checks"] = {
      coordinator: {
        ok: coordinator.ok,
        detail: `${coordinator.detail.backend} ${coordinator.detail.workerState} redis:${coordinator.detail.redis}`,
      },
    };
    for (const p of health.providers) {
      checks[`provider:${p.kind}:${p.id}`] = {
        ok: p.ok,
        ...(p.detail !== undefined ? { detail: p.detail } : {}),
      };
    }
    return { ok: health.ok && coordinator.ok, checks };
  };
}
