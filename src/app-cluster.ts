import { join } from "node:path";
import type { Registry } from "prom-client";
import type { TalkgateConfig } from "./config/index.js";
import type { TalkLogger } from "./core/index.js";
import type { TalkRuntime } from "./core/index.js";
import type { TerminalReason } from "./core/index.js";
import {
  type AppJobs,
  appJobs,
  type Coordinator,
  createCoordinator,
  createJobScheduler,
  Drainer,
  type DrainResult,
  JobMetrics,
  type JobScheduler,
  type ReadyReport,
  SessionBinder,
} from "./cluster/index.js";
import type { GatewayCluster } from "./gateway/index.js";

/**
 * The cluster side of the composition root: the coordinator chosen by
 * `redis.url` (in-process when unset), the binder that claims, publishes and
 * releases every runtime session, the job queue, and the SIGTERM drain. Kept
 * out of app.ts so that file stays a list of parts; nothing below src/ imports it.
 */
export interface AppCluster {
  readonly coordinator: Coordinator;
  /** Jobs for surfaces: outbound calls (telephony), meeting bots (meetings). */
  readonly jobs: AppJobs;
  /** False once a drain began: surfaces refuse new calls and sessions. */
  readonly accepting: boolean;
  /** What the Gateway needs (remote verbs, remote events, lost owners). */
  readonly gateway: GatewayCluster;
  ready(): ReadyReport;
  /**
   * SIGTERM: stop taking sessions and jobs, mark the worker draining, wait
   * for running sessions and jobs to end (up to cluster.drainTimeoutMs).
   * Idempotent. The caller closes the app afterwards.
   */
  drain(): Promise<DrainResult>;
  /**
   * An operator's drain (admin.worker.drain): the same drain, without the
   * exit that follows SIGTERM; resolves once the worker is marked draining.
   */
  startDrain(): Promise<void>;
  /** Where to close a session lost to the cluster (the Gateway's controller when it holds it). */
  setLocalCloser(
    closer: (sessionId: string, reason: TerminalReason, message: string) => Promise<boolean>,
  ): void;
  /** Stop hooks that refuse new work (the Gateway's session refusal). */
  onStopAccepting(hook: () => void): void;
  /** Adds the cluster's metrics (`talkgate_jobs_total{kind,outcome}`) to the registry the app exposes. */
  registerMetrics(registry: Registry): void;
  /** Jobs first (their handlers abort), then the binder and the coordinator (leases released). Idempotent. */
  closeJobs(): Promise<void>;
  close(): Promise<void>;
}

export interface AppClusterInputs {
  config: TalkgateConfig;
  runtime: TalkRuntime;
  logger: TalkLogger;
}

/** How often a drain re-counts running work besides the change notifications. */
const DRAIN_RECOUNT_MS = 200;

export async function createAppCluster({ config, runtime, logger }: AppClusterInputs): Promise<AppCluster> {
  const redisUrl = config.redis.url;
  const coordinator = await createCoordinator({
    ...(redisUrl !== undefined ? { redisUrl } : {}),
    keyPrefix: config.redis.keyPrefix,
    // Shared settings (voicewake): files here without Redis; Redis holds them in a cluster.
    settingsDir: join(config.dataDir, "settings"),
    ...(config.cluster.workerId !== undefined ? { workerId: config.cluster.workerId } : {}),
    roles: config.cluster.roles,
    leaseTtlSec: config.cluster.leaseTtlSec,
    commandTimeoutMs: config.cluster.commandTimeoutMs,
    maxSessions: config.runtime.maxSessions,
    eventRetention: config.runtime.replayLimit,
    eventRetentionBytes: config.runtime.replayMaxBytes,
    eventRetentionAgeMs: config.runtime.replayMaxAgeMs,
    closedRetentionMs: Math.max(1, config.runtime.closedRetentionMs),
    logger,
  });
  let closer: ((sessionId: string, reason: TerminalReason, message: string) => Promise<boolean>) | undefined;
  const binder = new SessionBinder({
    runtime,
    coordinator,
    logger,
    closeLocal: async (sessionId, reason, message) => {
      if (closer && (await closer(sessionId, reason, message))) return;
      await runtime.getSession(sessionId)?.close(reason, message);
    },
  });
  let scheduler: JobScheduler;
  try {
    scheduler = await createJobScheduler({
      ...(redisUrl !== undefined ? { redisUrl } : {}),
      keyPrefix: config.redis.keyPrefix,
      workerId: coordinator.workerId,
      isFull: () => runtime.sessionCount >= config.runtime.maxSessions,
      redisReady: () => coordinator.ready().detail.redis !== "reconnecting",
      settings: config.cluster.jobs,
      logger,
    });
  } catch (err) {
    binder.close();
    await coordinator.close();
    throw err;
  }
  logger.info(
    { workerId: coordinator.workerId, roles: coordinator.roles, backend: coordinator.backend },
    "cluster coordinator ready",
  );

  const stopHooks: (() => void)[] = [];
  let markedDraining: () => void = () => {};
  const marked = new Promise<void>((resolve) => (markedDraining = resolve));
  let accepting = true;
  const drainer = new Drainer(
    {
      stopAccepting: async () => {
        accepting = false;
        for (const hook of stopHooks) hook();
        await scheduler.pause();
      },
      markDraining: async () => {
        try {
          await coordinator.setWorkerState("draining");
        } finally {
          markedDraining();
        }
      },
      work: {
        count: () => runtime.sessionCount + scheduler.activeJobs,
        onChange: (listener) => {
          // Session ends arrive as events; jobs end inside the scheduler, so a slow recount covers them too.
          const off = runtime.subscribeAll((event) => {
            if (event.type === "session.closed") setImmediate(listener);
          });
          const offJobs = scheduler.on("job", () => setImmediate(listener));
          const timer = setInterval(listener, DRAIN_RECOUNT_MS);
          timer.unref();
          return () => {
            off();
            offJobs();
            clearInterval(timer);
          };
        },
      },
    },
    { limitMs: config.cluster.drainTimeoutMs, logger },
  );

  const jobMetrics = new JobMetrics(scheduler);
  const gateway = createGatewayCluster(coordinator, (sessionId) => binder.claimed(sessionId));

  let jobsClosing: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const closeJobs = (): Promise<void> => {
    jobsClosing ??= scheduler
      .close()
      .catch((err: unknown) => logger.error({ err }, "closing the job queue failed"));
    return jobsClosing;
  };
  return {
    coordinator,
    jobs: appJobs(scheduler, coordinator.roles),
    get accepting() {
      return accepting;
    },
    gateway,
    ready: () => coordinator.ready(),
    drain: () => drainer.drain(),
    startDrain() {
      drainer.drain().catch((err: unknown) => logger.error({ err }, "drain failed"));
      return marked;
    },
    setLocalCloser(fn) {
      closer = fn;
    },
    onStopAccepting(hook) {
      stopHooks.push(hook);
    },
    registerMetrics(registry) {
      jobMetrics.register(registry);
    },
    closeJobs,
    close() {
      closing ??= (async () => {
        await closeJobs();
        jobMetrics.close();
        binder.close();
        await coordinator
          .close()
          .catch((err: unknown) => logger.error({ err }, "closing the coordinator failed"));
      })();
      return closing;
    },
  };
}

/** The Gateway's narrow view of a coordinator (also used by tests with in-process coordinators). */
export function createGatewayCluster(
  coordinator: Coordinator,
  claimed: (sessionId: string) => Promise<void>,
  options: { remoteCheckMs?: number } = {},
): GatewayCluster {
  return {
    workerId: coordinator.workerId,
    claimed,
    sendCommand: (sessionId, command, commandOptions) =>
      coordinator.sendCommand(sessionId, command, commandOptions),
    onCommand: (handler) => coordinator.onCommand(handler),
    subscribeEvents: (sessionId, afterSeq, listener) =>
      coordinator.subscribeEvents(sessionId, afterSeq, listener),
    locate: (sessionId) => coordinator.locate(sessionId),
    onSessionLost: (listener) => coordinator.on("session-lost", (event) => listener(event.sessionId)),
    liveWorkers: async () => (await coordinator.listWorkers()).map((w) => w.id),
    ...(options.remoteCheckMs !== undefined ? { remoteCheckMs: options.remoteCheckMs } : {}),
  };
}
