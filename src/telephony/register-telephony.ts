/**
 * The telephony surface on the gateway's Fastify app in one call, for a
 * composition root that does not build a SurfaceContext yet: it assembles
 * one from its deps and registers `telephonyPlugin(ctx, options)`. Once the
 * composition root has the one surface context, it calls the plugin itself:
 *
 *   const { carrier, publicUrl } = configuredCarrier(config.telephony);
 *   const plugin = telephonyPlugin(surfaceContext, { config: config.telephony, server: config.server,
 *     carrier, carrierPublicUrl: publicUrl, silenceTimeoutMs, callControls, realtimeAvailable, pipeline });
 *   await gateway.app.register(plugin);   // plugin.telephony: calls, stats, mode
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { AppJobs } from "../cluster/job-scheduler.js";
import type { TalkgateConfig } from "../config/config-schema.js";
import type { TelephonyConfig } from "../config/telephony-schema.js";
import { toTalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import type {
  PipelineOptions,
  PipelineProviderResolver,
  PipelineToolDispatcher,
} from "../core/pipelines/pipeline-options.js";
import { sessionControllerFactory } from "../core/pipelines/controller-factory.js";
import type { TalkRuntime } from "../core/session-types.js";
import type { CallControlRegistry } from "../core/tools/call-control.js";
import { loopbackBaseUrl, type GatewayServer } from "../gateway/index.js";
import type { SurfaceContext } from "../gateway/surface-context.js";
import { tokenAuthorizer, type BearerToken } from "./admin-auth.js";
import { configuredCarrier } from "./carriers.js";
import { telephonyPlugin, type Telephony } from "./telephony-plugin.js";

export type { Telephony } from "./telephony-plugin.js";

export interface TelephonyDeps {
  config: TelephonyConfig;
  server: Pick<TalkgateConfig["server"], "host" | "publicUrl">;
  /** Bearer tokens (auth.tokens): admin ones may place calls. */
  authTokens: readonly BearerToken[];
  /** talk.input.silenceTimeoutMs: silence that ends a caller's turn (stt-tts). */
  silenceTimeoutMs: number;
  runtime: TalkRuntime;
  providers: PipelineProviderResolver;
  /** Core's tool dispatcher with the tools offered to realtime providers, read per call. */
  tools: () => PipelineToolDispatcher;
  /** Persona, model, voice...: trusted configuration, the same for every call. */
  pipelineOptions: PipelineOptions;
  callControls: CallControlRegistry;
  /** A realtime provider that can be relayed is configured (the default mode is then realtime). */
  realtimeAvailable: boolean;
  /** The Gateway's surface-method hook: `telephony.call` is added through it when given. */
  registerMethod?: GatewayServer["registerMethod"];
  /** `outbound-call` jobs (Redis deployments); absent: outbound calls are placed in-process. */
  jobs?: AppJobs;
  logger: TalkLogger;
}

export async function registerTelephony(app: FastifyInstance, deps: TelephonyDeps): Promise<Telephony> {
  const { carrier, publicUrl } = configuredCarrier(deps.config);
  const ctx: SurfaceContext = {
    runtime: deps.runtime,
    // Built per request, so the tools are read when a controller is made (as the calls read them), not now.
    createController: (request) =>
      sessionControllerFactory({
        providers: deps.providers,
        tools: deps.tools(),
        options: deps.pipelineOptions,
        logger: deps.logger,
      })(request),
    authorizer: tokenAuthorizer(deps.authTokens),
    jobs: deps.jobs,
    registerMethod: (name, definition) => deps.registerMethod?.(name, definition),
    broadcast: () => undefined,
    replyError: (reply: FastifyReply, err: unknown) => {
      const error = toTalkError(err);
      return reply.code(500).send({ error: error.toJSON() });
    },
    loopbackBaseUrl: () => loopbackBaseUrl(app) ?? "",
    logger: deps.logger,
  };
  const plugin = telephonyPlugin(ctx, {
    config: deps.config,
    server: deps.server,
    carrier,
    carrierPublicUrl: publicUrl,
    silenceTimeoutMs: deps.silenceTimeoutMs,
    callControls: deps.callControls,
    realtimeAvailable: deps.realtimeAvailable,
    pipeline: { providers: deps.providers, tools: deps.tools, options: deps.pipelineOptions },
  });
  await app.register(plugin);
  return plugin.telephony;
}
