import type { AppCluster } from "../app-cluster.js";
import { redactText } from "../config/index.js";
import type { ProviderOutcomes } from "../core/index.js";
import type { ProviderRegistry } from "../core/index.js";
import type { ProviderResolver } from "../core/index.js";
import type { ReadinessReport } from "../gateway/index.js";

/** What readiness reads of the providers: their health checks, request outcomes and which ones are defaults. */
export interface ReadinessProviders {
  registry: ProviderRegistry;
  outcomes: ProviderOutcomes;
  resolver: Pick<ProviderResolver, "defaultId">;
}

/**
 * `GET /readyz`: the coordinator and every provider, one entry each. A
 * provider is not ready when its health check fails, or when it is a
 * required one (the default of its kind, what sessions use unless they name
 * another) and its real requests keep failing (ProviderOutcomes); it is ready
 * again once a request succeeds. Other providers' failures show in their
 * entry without failing readiness. Details go through the one redaction:
 * no URL credentials or query strings, no keys.
 */
export function readinessProbe(
  providers: ReadinessProviders,
  cluster: Pick<AppCluster, "ready">,
): () => Promise<ReadinessReport> {
  const { registry, outcomes, resolver } = providers;
  return async () => {
    const health = await registry.health();
    const coordinator = cluster.ready();
    const checks: ReadinessReport["checks"] = {
      coordinator: {
        ok: coordinator.ok,
        detail: `${coordinator.detail.backend} ${coordinator.detail.workerState} redis:${coordinator.detail.redis}`,
      },
    };
    let requiredFailing = false;
    for (const p of health.providers) {
      const outcome = outcomes.status(p.kind, p.id);
      const required = resolver.defaultId(p.kind) === p.id;
      const failing = !outcome.ok;
      if (failing && required) requiredFailing = true;
      const detail = failing
        ? `${outcome.detail ?? "failing"}${required ? "" : " (not a default provider)"}`
        : p.detail;
      checks[`provider:${p.kind}:${p.id}`] = {
        ok: p.ok && !(failing && required),
        ...(detail !== undefined ? { detail: redactText(detail) } : {}),
      };
    }
    return { ok: health.ok && coordinator.ok && !requiredFailing, checks };
  };
}
