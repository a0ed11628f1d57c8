/**
 * The composition root: turns the validated configuration into a running
 * process. The only place that knows every layer; it reads as a list
 * (config -> providers -> runtime -> tools and pipelines -> cluster ->
 * gateway -> surfaces), each step a small module under src/app/.
 */
import type { Logger } from "pino";
import type { LoadedConfig } from "./config/index.js";
import type { TalkgateConfig } from "./config/index.js";
import type { TalkProvider } from "./core/index.js";
import { createTalkRuntime } from "./core/index.js";
import { sessionLogFiles } from "./voice/index.js";
import type { TalkRuntime, TalkRuntimeOptions } from "./core/index.js";
import type { ToolDefinition } from "./core/index.js";
import type { GatewayDeps, GatewayOptionsInput, GatewayServer } from "./gateway/index.js";
import type { BrowserLauncher, VoiceWakeStore } from "./meetings/index.js";
import { type AppCluster, createAppCluster } from "./app-cluster.js";
import { renderFaultSpeech } from "./app/faults.js";
import { buildGateway } from "./app/gateway.js";
import { createAppLogger } from "./app/logger.js";
import { registerOps } from "./app/ops.js";
import { brainOptions, buildPipelines, prepareInputProcessing } from "./app/pipelines.js";
import { registerPages } from "./app/pages.js";
import { buildProviders, type AppProviders } from "./app/providers.js";
import { registerMeetings, registerTelephonySurface, surfaceContext } from "./app/surfaces.js";
import { buildTools } from "./app/tools.js";
import {
  MemoryTrimmer,
  nativeMemoryBinding,
  nativeMemoryUnavailable,
  observedProvider,
  ProviderProbes,
  UsageEvents,
  registerNativeMemoryMetrics,
  traceLogMixin,
} from "./ops/index.js";

export { configuredProviders } from "./app/providers.js";

export interface App {
  readonly config: TalkgateConfig;
  readonly logger: Logger;
  readonly runtime: TalkRuntime;
  readonly gateway: GatewayServer;
  /** Coordinator, jobs (`cluster.jobs`) and drain; in-process unless redis.url is set. */
  readonly cluster: AppCluster;
  /** The meeting bots' wake triggers (voicewake.get/set), shared by every worker through the coordinator. */
  readonly voiceWake: VoiceWakeStore;
  /** The native-memory trimmer (runtime.mallocTrimIntervalMs); undefined when off or not built here. */
  readonly memoryTrimmer: MemoryTrimmer | undefined;
  /** The registered providers and the default of each kind (an embedder's warm-up of the recognizer, say). */
  readonly providers: AppProviders;
  listen(overrides?: { port?: number }): Promise<{ urls: string[]; port: number }>;
  /** Closes the gateway (sockets get 1001), jobs, sessions, the coordinator, then providers. Idempotent. */
  close(): Promise<void>;
}

export interface CreateAppOptions {
  /** Providers to register instead of the ones the configuration names (tests, embedders). */
  providers?: TalkProvider[];
  logger?: Logger;
  /** Tools registered after the built-in ones, under the same `agent.tools` policy (embedders' own tools). Default none. */
  tools?: readonly ToolDefinition[];
  /** Runtime options the configuration has no key for (`closeGraceMs`). Default: the runtime's defaults. */
  runtime?: Pick<TalkRuntimeOptions, "closeGraceMs">;
  /**
   * Gateway options over the ones the configuration gives (keys it has none
   * for, e.g. `maxSpeakChars`); a nested object replaces the configured one,
   * except `auth.tokens`, which always come from `auth.tokens` in the config.
   */
  gateway?: GatewayOptionsInput;
  /** Gateway dependencies used instead of the ones built here (an embedder's own readiness probe or cluster). */
  deps?: Partial<Omit<GatewayDeps, "runtime" | "logger">>;
  /**
   * What starts the meeting bots' browsers, instead of one Debian Chromium per bot (tests hand a file's
   * bots one browser; the bots' pages, joining, capture and speech are the same). Default: per bot.
   */
  meetingBrowsers?: BrowserLauncher;
}

export async function createApp(loaded: LoadedConfig, options: CreateAppOptions = {}): Promise<App> {
  const { config } = loaded;
  // Every line is redacted (src/config/redact.ts); lines naming a traced session carry its traceId and spanId.
  const logger = options.logger ?? createAppLogger({ ...config.log, mixin: traceLogMixin });
  logger.info(
    { config: loaded.path ?? "(embedded defaults)", env: loaded.envOverrides },
    "talkgate starting",
  );
  for (const warning of loaded.warnings ?? []) logger.warn(warning);

  const providers = buildProviders(config, logger, options.providers);
  const runtime = createTalkRuntime({
    replayLimit: config.runtime.replayLimit,
    replayMaxBytes: config.runtime.replayMaxBytes,
    replayMaxAgeMs: config.runtime.replayMaxAgeMs,
    closedRetentionMs: config.runtime.closedRetentionMs,
    maxSessions: config.runtime.maxSessions,
    sessionLogs: sessionLogFiles({
      dataDir: config.dataDir,
      flushIntervalMs: config.runtime.sessionLogFlushMs,
      logger,
    }),
    ...options.runtime,
    logger,
  });
  const brain = brainOptions(config);
  const tools = buildTools({ config, providers, runtime, brain, extra: options.tools ?? [], logger });
  // The failure path's lines, rendered once by the local TTS: audio that cannot fail when a provider has.
  const faultSpeech = await renderFaultSpeech(config, providers.registry, logger);
  // Every provider call of every pipeline is observed (metrics, traces, usage): the observers join in registerOps.
  // Each provider of a session's chains (fallbacks too) is observed as that session's.
  const probes = new ProviderProbes(logger);
  // Each STT, TTS and agent call's usage.metrics on its session, with or without the operations surface.
  probes.add(new UsageEvents());
  await prepareInputProcessing(config);
  const pipelines = buildPipelines(
    config,
    providers,
    tools,
    brain,
    logger,
    faultSpeech,
    (provider, session) => observedProvider(provider, session, probes),
  );
  const cluster = await createAppCluster({ config, runtime, logger });
  const gateway = await buildGateway({
    config,
    runtime,
    providers,
    tools,
    createController: pipelines.createController,
    cluster,
    logger,
    options: options.gateway,
    deps: options.deps,
  });

  const ctx = surfaceContext({
    runtime,
    createController: pipelines.createController,
    gateway,
    // With Redis, bots and outbound calls are jobs run by workers with the matching role.
    jobs: config.redis.url ? cluster.jobs : undefined,
    // Surfaces refuse new calls from the drain's first step on (and while the app closes).
    draining: () => !cluster.accepting || (gateway.state !== "created" && gateway.state !== "listening"),
    logger,
  });
  const surfaces = { config, ctx, gateway, cluster, providers, tools };
  const voiceWake = await registerMeetings({ ...surfaces, meetingBrowsers: options.meetingBrowsers });
  await registerTelephonySurface(surfaces);
  await registerPages(gateway);
  await registerOps({ config, ctx, gateway, cluster, tools, probes });
  const trimmer = memoryTrimmer(config, logger);
  if (trimmer) registerNativeMemoryMetrics(gateway.metrics.registry, trimmer);

  let closing: Promise<void> | undefined;
  return {
    config,
    logger,
    runtime,
    gateway,
    cluster,
    voiceWake,
    memoryTrimmer: trimmer,
    providers,
    listen: (overrides) => gateway.listen(overrides),
    close() {
      closing ??= (async () => {
        trimmer?.close();
        await gateway.close();
        await cluster.closeJobs();
        await runtime.close();
        // After the runtime, so the last session.closed events are published before the leases go.
        await cluster.close();
        await providers.registry.close();
        logger.info("talkgate stopped");
      })();
      return closing;
    },
  };
}

/** runtime.mallocTrimIntervalMs: the process's native-memory trimmer, when enabled and the binding loads. */
function memoryTrimmer(config: TalkgateConfig, logger: Logger): MemoryTrimmer | undefined {
  const { mallocTrimIntervalMs: intervalMs, mallocTrimMinFreeBytes: minFreeBytes } = config.runtime;
  if (intervalMs === 0) return undefined;
  const binding = nativeMemoryBinding();
  if (!binding) {
    logger.info(
      { reason: nativeMemoryUnavailable() },
      "runtime.mallocTrimIntervalMs: no malloc_trim here (scripts/setup.sh builds native/malloc-trim on glibc); freed native memory stays resident",
    );
    return undefined;
  }
  return new MemoryTrimmer({ binding, intervalMs, minFreeBytes, logger });
}
