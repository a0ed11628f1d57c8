import { pino, type Logger } from "pino";
import type { LoadedConfig } from "./config/load-config.js";
import type { TalkgateConfig } from "./config/config-schema.js";
import { redactSecrets } from "./config/redact.js";
import { TalkError } from "./core/errors.js";
import { createSessionController } from "./core/pipelines/session-controller.js";
import type { PipelineProviderResolver } from "./core/pipelines/pipeline-options.js";
import type { ProviderKind, TalkProvider } from "./core/provider-types.js";
import { ProviderRegistry } from "./core/provider-registry.js";
import { ProviderResolver, type ProviderDefaults } from "./core/provider-resolver.js";
import { createTalkRuntime } from "./core/session-runtime.js";
import type { TalkRuntime, TalkRuntimeOptions, TalkSession } from "./core/session-types.js";
import { buildTalkCatalog } from "./core/talk-catalog.js";
import { ToolDispatcher } from "./core/tool-dispatcher.js";
import { ToolPolicy } from "./core/tool-policy.js";
import { ToolRegistry, type ToolDefinition } from "./core/tool-registry.js";
import { createGetTimeTool } from "./core/tools/get-time-tool.js";
import { createAgentConsultTool } from "./core/tools/agent-consult-tool.js";
import { CallControlRegistry } from "./core/tools/call-control.js";
import { createEndCallTool, createSendDtmfTool, createTransferCallTool } from "./core/tools/call-tools.js";
import { ConsultProgressChannel } from "./core/tools/consult-progress.js";
import { SessionTranscripts } from "./core/tools/session-transcripts.js";
import { resolveBrainOptions, toolOwnershipOf, type BrainOptions } from "./core/pipelines/brain-options.js";
import { exportToolsForProvider } from "./core/tools/provider-tool-export.js";
import {
  createGatewayServer,
  type GatewayDeps,
  type GatewayOptionsInput,
  type GatewayServer,
  loopbackBaseUrl,
} from "./gateway/index.js";
import {
  createLocalProviders,
  createOpenAiRealtimeProvider,
  createOpenAiSpeechProviders,
} from "./providers/index.js";
import { createOpenAiChatAgent } from "./providers/openai-compatible/openai-chat-agent.js";
import { LOCAL_SPEECH_PROVIDER_IDS, openAiSpeechEntries } from "./config/speech-provider-schema.js";
import { type AppCluster, createAppCluster } from "./app-cluster.js";
import {
  BotManager,
  defaultPlatformDrivers,
  meetingsPlugin,
  registerMeetingsMethods,
  tokenAuthorizer,
  VoiceWakeStore,
} from "./meetings/index.js";

/**
 * The composition root: turns the validated configuration into a running
 * process (runtime, providers, tools, gateway). The only place that knows
 * every layer; each layer below it knows only its narrow inputs.
 */
export interface App {
  readonly config: TalkgateConfig;
  readonly logger: Logger;
  readonly runtime: TalkRuntime;
  readonly gateway: GatewayServer;
  /** Coordinator, jobs (`cluster.jobs`) and drain; in-process unless redis.url is set. */
  readonly cluster: AppCluster;
  /** The meeting bots' wake triggers (voicewake.get/set), shared by every worker through the coordinator. */
  readonly voiceWake: VoiceWakeStore;
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
}

/** Builds the providers the configuration asks for: local engines always, cloud ones when configured. */
/** The object without its undefined fields (exactOptionalPropertyTypes: options are absent, not undefined). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

export function configuredProviders(config: TalkgateConfig): TalkProvider[] {
  const providers: TalkProvider[] = createLocalProviders({
    agent: config.agent.endpoint ? false : {},
    stt: definedOnly(config.talk.local.pocketsphinx),
  });
  const endpoint = config.agent.endpoint;
  if (endpoint) {
    providers.push(
      createOpenAiChatAgent({
        baseUrl: endpoint.baseUrl,
        model: endpoint.model,
        timeoutMs: endpoint.timeoutMs,
        ...(endpoint.apiKey !== undefined ? { apiKey: endpoint.apiKey } : {}),
      }),
    );
  }
  // talk.providers.<id> (openai-compatible): an STT and / or a TTS provider under that id.
  for (const [id, settings] of openAiSpeechEntries(config.talk.providers)) {
    providers.push(...createOpenAiSpeechProviders(id, settings));
  }
  const openai = config.talk.realtime?.providers?.["openai"];
  if (openai) {
    providers.push(
      createOpenAiRealtimeProvider({
        id: "openai",
        ...(typeof openai["apiKey"] === "string" ? { apiKey: openai["apiKey"] } : {}),
        ...(typeof openai["baseUrl"] === "string" ? { baseUrl: openai["baseUrl"] } : {}),
        ...(config.talk.realtime?.model ? { model: config.talk.realtime.model } : {}),
        ...(config.talk.realtime?.voice ? { voice: config.talk.realtime.voice } : {}),
      }),
    );
  }
  return providers;
}

/**
 * Default provider id per kind. `talk.provider` names the speech provider and
 * applies to each speech kind that has a provider of that id; naming one that
 * exists for no kind is a configuration error, found at start-up. Unset, the
 * one `talk.providers` entry is the speech provider when there is exactly one.
 * A speech kind it does not cover keeps its local engine when several
 * providers of that kind are registered (the others are reachable by id).
 */
function providerDefaults(config: TalkgateConfig, registry: ProviderRegistry): ProviderDefaults {
  const defaults: ProviderDefaults = {};
  const configured = openAiSpeechEntries(config.talk.providers).map(([id]) => id);
  const speech = config.talk.provider ?? (configured.length === 1 ? configured[0] : undefined);
  if (speech !== undefined) {
    const kinds = (["stt", "tts"] as const).filter((kind) => registry.has(kind, speech));
    if (kinds.length === 0) {
      throw new TalkError("config_invalid", `talk.provider: no speech provider "${speech}" is configured.`);
    }
    for (const kind of kinds) defaults[kind] = speech;
  }
  for (const kind of ["stt", "tts"] as const) {
    if (defaults[kind] !== undefined || registry.list(kind).length < 2) continue;
    const local = LOCAL_SPEECH_PROVIDER_IDS.find((id) => registry.has(kind, id));
    if (local) defaults[kind] = local;
  }
  const realtime = config.talk.realtime?.provider;
  if (realtime !== undefined) {
    if (!registry.has("realtime", realtime)) {
      throw new TalkError(
        "config_invalid",
        `talk.realtime.provider: no realtime provider "${realtime}" is configured (set talk.realtime.providers.${realtime}).`,
      );
    }
    defaults.realtime = realtime;
  }
  return defaults;
}

function optional<K extends ProviderKind>(resolver: ProviderResolver, kind: K, id?: string) {
  try {
    return resolver.resolve(kind, id);
  } catch (err) {
    if (err instanceof TalkError && err.code === "provider_not_found") return undefined;
    throw err;
  }
}

export async function createApp(loaded: LoadedConfig, options: CreateAppOptions = {}): Promise<App> {
  const { config } = loaded;
  const logger = options.logger ?? pino({ level: config.log.level, base: { service: "talkgate" } });
  logger.info(
    { config: loaded.path ?? "(embedded defaults)", env: loaded.envOverrides },
    "talkgate starting",
  );

  const registry = new ProviderRegistry({ logger });
  for (const provider of options.providers ?? configuredProviders(config)) registry.register(provider);
  const resolver = new ProviderResolver({ registry, defaults: providerDefaults(config, registry) });

  // Tools (seed 003): one canonical registry, exported per provider, run by the one dispatcher below.
  const brain: BrainOptions = {
    chunker: config.agent.chunker,
    ttsPrefetch: config.agent.ttsPrefetch,
    progressCueMs: config.agent.progressCueMs,
    progressCueText: config.agent.progressCueText,
    consultTimeoutMs: config.agent.consultTimeoutMs,
    apologyText: config.agent.apologyText,
    progressive: config.agent.realtime.progressive,
    replyPath: config.agent.realtime.replyPath,
  };
  const callControls = new CallControlRegistry();
  const consultProgress = new ConsultProgressChannel();
  const transcripts = new SessionTranscripts();
  const tools = new ToolRegistry()
    .register(createGetTimeTool())
    .register(
      createAgentConsultTool({
        agent: () => optional(resolver, "agent"),
        session: (id) => {
          const s = runtime.getSession(id);
          return s && { metadata: s.metadata, history: transcripts.history(id) };
        },
        persona: config.agent.persona,
        brain: resolveBrainOptions(brain),
        progress: consultProgress,
      }),
    )
    .register(createEndCallTool(callControls))
    .register(createSendDtmfTool(callControls))
    .register(createTransferCallTool({ calls: callControls, targets: config.agent.transferTargets }));
  for (const tool of options.tools ?? []) tools.register(tool);
  const policy = new ToolPolicy({ allow: config.agent.tools.allow, deny: config.agent.tools.deny });
  const dispatcher = new ToolDispatcher({ registry: tools, policy, logger });
  const realtimeTools = () => tools.toRealtimeTools((name) => policy.isAllowed(name));

  const runtime = createTalkRuntime({
    replayLimit: config.runtime.replayLimit,
    closedRetentionMs: config.runtime.closedRetentionMs,
    maxSessions: config.runtime.maxSessions,
    dataDir: config.dataDir,
    ...options.runtime,
    logger,
  });
  const cluster = await createAppCluster({ config, runtime, logger });
  runtime.subscribeAll((event) => transcripts.observe(event));

  const pipelineProviders: PipelineProviderResolver = {
    stt: (s: TalkSession) =>
      optional(resolver, "stt", s.provider && registry.has("stt", s.provider) ? s.provider : undefined),
    tts: () => optional(resolver, "tts"),
    agent: () => optional(resolver, "agent"),
    realtime: (s: TalkSession) => optional(resolver, "realtime", s.provider),
  };

  const deps: GatewayDeps = {
    runtime,
    catalog: () => buildTalkCatalog({ providers: registry.list(), defaults: resolver.defaults }),
    effectiveConfig: ({ admin }) => {
      const effective = {
        talk: config.talk,
        providers: {
          stt: resolver.defaultId("stt") ?? null,
          tts: resolver.defaultId("tts") ?? null,
          agent: resolver.defaultId("agent") ?? null,
          realtime: resolver.defaultId("realtime") ?? null,
        },
      };
      return admin ? effective : redactSecrets(effective);
    },
    speak: (request, signal) => resolver.resolve("tts").synthesize({ ...request, signal }),
    createController: async (session, request) => {
      const controller = createSessionController({
        session,
        providers: pipelineProviders,
        tools: Object.assign(dispatcher, { definitions: realtimeTools(), progress: consultProgress }),
        logger,
        options: {
          persona: config.agent.persona,
          interruptOnSpeech: config.talk.input.interruptOnSpeech,
          outputDeltaIntervalMs: config.talk.output.deltaEventIntervalMs,
          brain,
          maxAppendBytes: config.gateway.maxAudioBytesPerFrame,
          ...((request.model ?? config.talk.realtime?.model)
            ? { realtimeModel: request.model ?? config.talk.realtime?.model }
            : {}),
          ...((request.voice ?? config.talk.realtime?.voice)
            ? { realtimeVoice: request.voice ?? config.talk.realtime?.voice }
            : {}),
        },
        ...(request.inputFormat !== undefined ? { inputFormat: request.inputFormat } : {}),
        ...(request.outputFormat !== undefined ? { outputFormat: request.outputFormat } : {}),
      });
      await controller.ready;
      return controller;
    },
    createClientSession: async (request) => {
      const provider = resolver.resolve("realtime", request.provider, {
        clientSessions: true,
        transport: request.transport,
        ...(request.model !== undefined ? { model: request.model } : {}),
        ...(request.voice !== undefined ? { voice: request.voice } : {}),
      });
      if (!provider.createClientSession) {
        throw new TalkError(
          "capability_unsupported",
          `Provider "${provider.id}" cannot mint client sessions.`,
        );
      }
      // Same ownership rule and per-provider sanitizing export as Gateway-owned sessions (seed 003).
      const declared =
        toolOwnershipOf(config.agent.realtime.replyPath) === "transport_only"
          ? []
          : exportToolsForProvider(realtimeTools(), provider.capabilities.toolSchema).tools;
      const grant = await provider.createClientSession({
        instructions: config.agent.persona,
        tools: declared,
        transport: request.transport,
        signal: request.signal,
        ...(request.model !== undefined ? { model: request.model } : {}),
        ...(request.voice !== undefined ? { voice: request.voice } : {}),
      });
      return { provider: provider.id, grant, tools: declared.map((t) => t.name) };
    },
    tools: dispatcher,
    readiness: async () => {
      const health = await registry.health();
      const coordinator = cluster.ready();
      const checks: Record<string, { ok: boolean; detail?: string }> = {
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
    },
    logger,
    cluster: cluster.gateway,
    ...options.deps,
  };

  let gateway: GatewayServer;
  try {
    gateway = createGatewayServer(deps, {
      host: config.server.host,
      port: config.server.port,
      maxPayloadBytes: config.gateway.maxPayloadBytes,
      maxConnections: config.gateway.maxConnections,
      maxSessionsPerConnection: config.gateway.maxSessionsPerConnection,
      rateLimit: config.gateway.rateLimit,
      reconnectGraceMs: config.gateway.reconnectGraceMs,
      heartbeatMs: config.gateway.heartbeatMs,
      maxAudioBytesPerFrame: config.gateway.maxAudioBytesPerFrame,
      ...options.gateway,
      auth: { ...options.gateway?.auth, tokens: config.auth.tokens },
    });
  } catch (err) {
    // A refused gateway option must not leave Redis connections holding the process open.
    await cluster.close();
    throw err;
  }
  cluster.onStopAccepting(() => gateway.stopAcceptingSessions());
  cluster.setLocalCloser((sessionId, reason) => gateway.closeSession(sessionId, reason));
  cluster.registerMetrics(gateway.metrics.registry);

  // Meetings: bot routes, the bot pages' capture socket and the local test meeting (src/meetings).
  // Wake triggers (seed 004): configured defaults until voicewake.set; stored as the cluster's shared
  // setting `voicewake` (<dataDir>/settings/voicewake.json without Redis, Redis with), heard by every worker.
  const voiceWake = await VoiceWakeStore.open({
    settings: cluster.coordinator.settings,
    defaults: config.meetings.wakeTriggers,
    logger,
  });
  if (config.meetings.googleMeet.testOrigins.length > 0) {
    logger.warn(
      { testOrigins: config.meetings.googleMeet.testOrigins },
      "meetings.googleMeet.testOrigins is set: the Google Meet driver also joins meetings at these origins (tests and development only)",
    );
  }
  const meetings = new BotManager({
    runtime,
    providers: pipelineProviders,
    drivers: defaultPlatformDrivers({ googleMeet: config.meetings.googleMeet }),
    dataDir: config.dataDir,
    options: config.meetings,
    // With Redis, bots are `meeting-bot` jobs run by workers with the "bot" role; without, they run here.
    ...(config.redis.url ? { jobs: cluster.jobs } : {}),
    localBaseUrl: () => loopbackBaseUrl(gateway.app),
    // Agent mode answers through the brain's stt-tts path with the same persona and brain options.
    agent: { voiceWake, pipeline: { persona: config.agent.persona, brain } },
    logger,
  });
  void gateway.app.register(
    meetingsPlugin({ manager: meetings, authorize: tokenAuthorizer(config.auth.tokens) }),
  );
  // voicewake.get/set (+ voicewake.changed) and meetings.bots.* on the Talk API, through the surface-method hook.
  registerMeetingsMethods({
    manager: meetings,
    voiceWake,
    registerMethod: (name, definition) => gateway.registerMethod(name, definition),
    broadcast: (event, payload) => gateway.broadcast(event, payload),
  });

  // Telephony: Twilio voice webhook, media streams, outbound calls (src/telephony, docs/telephony.md).
  const { registerTelephony } = await import("./telephony/register-telephony.js");
  await registerTelephony(gateway.app, {
    config: config.telephony,
    server: config.server,
    authTokens: config.auth.tokens,
    silenceTimeoutMs: config.talk.input.silenceTimeoutMs,
    runtime,
    providers: pipelineProviders,
    tools: () => Object.assign(dispatcher, { definitions: realtimeTools(), progress: consultProgress }),
    pipelineOptions: {
      persona: config.agent.persona,
      brain,
      interruptOnSpeech: config.talk.input.interruptOnSpeech,
      outputDeltaIntervalMs: config.talk.output.deltaEventIntervalMs,
      ...(config.talk.realtime?.model ? { realtimeModel: config.talk.realtime.model } : {}),
      ...(config.talk.realtime?.voice ? { realtimeVoice: config.talk.realtime.voice } : {}),
    },
    callControls,
    realtimeAvailable: registry
      .list()
      .some((p) => p.kind === "realtime" && p.capabilities.gatewayRelay === true),
    // telephony.call on the Talk API (admin); with Redis, outbound calls are `outbound-call` jobs on media workers.
    registerMethod: (name, definition) => gateway.registerMethod(name, definition),
    ...(config.redis.url ? { jobs: cluster.jobs } : {}),
    logger,
  });

  let closing: Promise<void> | undefined;
  return {
    config,
    logger,
    runtime,
    gateway,
    cluster,
    voiceWake,
    listen: (overrides) => gateway.listen(overrides),
    close() {
      closing ??= (async () => {
        await gateway.close();
        await cluster.closeJobs();
        await runtime.close();
        // After the runtime, so the last session.closed events are published before the leases go.
        await cluster.close();
        await registry.close();
        logger.info("talkgate stopped");
      })();
      return closing;
    },
  };
}
