/**
 * The operations surface of the composition root (src/ops): the cluster-wide
 * admin API over the coordinator, the job queue and this worker's drain.
 */
import type { AppCluster } from "../app-cluster.js";
import type { TalkgateConfig } from "../config/index.js";
import type { GatewayServer, SurfaceContext } from "../gateway/index.js";
import {
  createTraceProvider,
  opsPlugin,
  type OpsCluster,
  type OpsSurface,
  type ProviderProbes,
} from "../ops/index.js";
import type { AppTools } from "./tools.js";

export interface OpsInputs {
  config: TalkgateConfig;
  ctx: SurfaceContext;
  gateway: GatewayServer;
  cluster: AppCluster;
  tools: AppTools;
  probes: ProviderProbes;
}

export async function registerOps(i: OpsInputs): Promise<OpsSurface> {
  const { coordinator } = i.cluster;
  const cluster: OpsCluster = {
    workerId: coordinator.workerId,
    listWorkers: (signal) => coordinator.listWorkers(signal),
    locate: (sessionId, signal) => coordinator.locate(sessionId, signal),
    sendCommand: (sessionId, command, options) => coordinator.sendCommand(sessionId, command, options),
    sendWorkerCommand: (workerId, command, options) =>
      coordinator.sendWorkerCommand(workerId, command, options),
    onWorkerCommand: (handlers) => coordinator.onWorkerCommand(handlers),
    subscribeEvents: (sessionId, afterSeq, listener, options) =>
      coordinator.subscribeEvents(sessionId, afterSeq, listener, options),
    onSessionLost: (listener) => coordinator.on("session-lost", (event) => listener(event.sessionId)),
    jobs: i.cluster.jobs,
    startDrain: () => i.cluster.startDrain(),
  };
  const traces = await createTraceProvider(process.env, coordinator.workerId, i.ctx.logger);
  const { plugin, surface } = opsPlugin(i.ctx, {
    cluster,
    traces,
    callControls: i.tools.callControls,
    registry: i.gateway.metrics.registry,
    probes: i.probes,
    dataDir: i.config.dataDir,
    usage: i.config.ops.usage,
    retentionDays: i.config.ops.retentionDays,
    eventLoopSampleMs: i.config.ops.eventLoopSampleMs,
  });
  await i.gateway.app.register(plugin);
  return surface;
}
