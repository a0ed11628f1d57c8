/**
 * The Talk API server of the composition root: its dependencies (catalog,
 * effective config, speak, controllers through the one factory, client
 * session minting, readiness) and its wiring to the cluster.
 */
import type { Logger } from "pino";
import type { AppCluster } from "../app-cluster.js";
import type { TalkgateConfig } from "../config/index.js";
import { redactSecrets } from "../config/index.js";
import { TalkError } from "../core/index.js";
import { startClientLeg, type SessionControllerFactory } from "../voice/index.js";
import type { TalkRuntime } from "../core/index.js";
import { buildTalkCatalog } from "../core/index.js";
import { exportToolsForProvider } from "../core/index.js";
import {
  createGatewayServer,
  type GatewayDeps,
  type GatewayOptionsInput,
  type GatewayServer,
} from "../gateway/index.js";
import { EFFECTIVE_CONFIG_SCHEMA, effectiveConfigOf } from "./effective-config.js";
import type { AppProviders } from "./providers.js";
import { checkSessionRequest, sessionProvidersOf } from "./session-request.js";
import { silenceTimeoutOf } from "./pipelines.js";
import { readinessProbe } from "./readiness.js";
import type { AppTools } from "./tools.js";

export interface AppGatewayInputs {
  config: TalkgateConfig;
  runtime: TalkRuntime;
  providers: AppProviders;
  tools: AppTools;
  createController: SessionControllerFactory;
  cluster: AppCluster;
  logger: Logger;
  /** CreateAppOptions.gateway: options over the configured ones (auth.tokens always from the config). */
  options?: GatewayOptionsInput | undefined;
  /** CreateAppOptions.deps: dependencies used instead of the ones built here. */
  deps?: Partial<Omit<GatewayDeps, "runtime" | "logger">> | undefined;
}

function gatewayDeps(i: AppGatewayInputs): GatewayDeps {
  const { config, runtime, providers, tools, createController, cluster, logger } = i;
  const { registry, resolver } = providers;
  const realtime = config.talk.realtime;
  return {
    runtime,
    catalog: () => buildTalkCatalog({ providers: registry.list(), defaults: resolver.defaults }),
    // talk.realtime.mode / .transport / .brain: the shape a create request leaves out.
    sessionDefaults: {
      ...(realtime?.mode !== undefined ? { mode: realtime.mode } : {}),
      ...(realtime?.transport !== undefined ? { transport: realtime.transport } : {}),
      ...(realtime?.brain !== undefined ? { brain: realtime.brain } : {}),
    },
    effectiveConfig: ({ admin }) => {
      const effective = effectiveConfigOf(config, (kind) => resolver.defaultId(kind));
      // Secrets are the fields the answer's schema marks; URLs lose credentials and query.
      return admin ? effective : redactSecrets(effective, EFFECTIVE_CONFIG_SCHEMA);
    },
    checkSession: (request) => checkSessionRequest(registry, resolver, request),
    sessionProviders: (request) => sessionProvidersOf(registry, resolver, request),
    speak: (request, signal) => resolver.resolve("tts").synthesize({ ...request, signal }),
    createController: async (session, request) => {
      const replyPath = request.replyPath ?? config.agent.realtime.replyPath;
      // bridge / brain hear the caller with the local STT: its turns end after talk.input.silenceTimeoutMs.
      const localEars = session.mode === "realtime" && replyPath !== "native";
      // Every session has a media leg: a Talk API session's is built here, as a call's or a bot's is.
      return startClientLeg({
        session,
        createController,
        logger,
        ...(request.clientTools !== undefined ? { clientTools: request.clientTools } : {}),
        options: {
          maxAppendBytes: config.gateway.maxAudioBytesPerFrame,
          // Captions finalize after talk.input.silenceTimeoutMs of silence; stt-tts turns are the client's
          // (push-to-talk: a held button is not the end of speech), realtime turns the provider's.
          ...(session.mode === "transcription" || localEars
            ? { silenceTimeoutMs: silenceTimeoutOf(config) }
            : {}),
          ...(request.replyPath !== undefined ? { brain: { replyPath: request.replyPath } } : {}),
          // checkSession let a model through for realtime only; a voice is the realtime provider's or the TTS's.
          ...(request.model !== undefined ? { realtimeModel: request.model } : {}),
          ...(request.voice !== undefined
            ? session.mode === "realtime"
              ? { realtimeVoice: request.voice }
              : { voice: request.voice }
            : {}),
        },
        inputFormat: request.inputFormat,
        outputFormat: request.outputFormat,
      });
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
      // A client-owned session is always the native reply path: the Gateway neither hears its caller
      // (bridge) nor drives its provider (brain). Its tools go through the per-provider sanitizing
      // export of Gateway-owned sessions (seed 003), without the call tools (no call behind it).
      const declared = exportToolsForProvider(
        tools.clientDefinitions(),
        provider.capabilities.toolSchema,
      ).tools;
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
    tools: tools.dispatcher,
    readiness: readinessProbe(providers, cluster),
    logger,
    cluster: cluster.gateway,
    ...i.deps,
  };
}

/**
 * Builds the gateway (options validated: config_invalid before anything
 * binds) and ties it to the cluster: drain stops new sessions, a lost lease
 * closes the local session, the cluster's metrics join /metrics.
 */
export async function buildGateway(i: AppGatewayInputs): Promise<GatewayServer> {
  const { config, cluster } = i;
  let gateway: GatewayServer;
  try {
    gateway = createGatewayServer(gatewayDeps(i), {
      host: config.server.host,
      port: config.server.port,
      maxPayloadBytes: config.gateway.maxPayloadBytes,
      maxConnections: config.gateway.maxConnections,
      maxSessionsPerConnection: config.gateway.maxSessionsPerConnection,
      rateLimit: config.gateway.rateLimit,
      reconnectGraceMs: config.gateway.reconnectGraceMs,
      heartbeatMs: config.gateway.heartbeatMs,
      maxAudioBytesPerFrame: config.gateway.maxAudioBytesPerFrame,
      maxBufferedBytes: config.gateway.maxBufferedBytes,
      maxBufferedBytesPerClient: config.gateway.maxBufferedBytesPerClient,
      maxBufferedBytesTotal: config.gateway.maxBufferedBytesTotal,
      ...i.options,
      auth: { ...i.options?.auth, tokens: config.auth.tokens },
    });
  } catch (err) {
    // A refused gateway option must not leave Redis connections holding the process open.
    await cluster.close();
    throw err;
  }
  cluster.onStopAccepting(() => gateway.stopAcceptingSessions());
  cluster.setLocalCloser((sessionId, reason) => gateway.closeSession(sessionId, reason));
  cluster.registerMetrics(gateway.metrics.registry);
  return gateway;
}
