/**
 * The telephony surface on the gateway's Fastify app, in one call from the
 * composition root: the Twilio voice webhook, the media-stream WebSocket,
 * outbound calls and their status callbacks. Calls are closed when the app
 * closes.
 *
 * Twilio not configured: with no auth token on a loopback server the routes
 * run in local demo mode (unsigned webhooks from loopback peers only, logged
 * loudly at start-up), which is what `talkgate call` uses; on any other host
 * they answer 503 naming the missing settings. An auth token without a
 * public URL is a configuration error at start-up.
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { AppJobs } from "../cluster/job-scheduler.js";
import { loopbackBaseUrl, routeCheck, type GatewayServer, type RequestAuthorizer } from "../gateway/index.js";
import type { TalkgateConfig } from "../config/config-schema.js";
import type { CallMode, TelephonyConfig } from "../config/telephony-schema.js";
import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import type {
  PipelineOptions,
  PipelineProviderResolver,
  PipelineToolDispatcher,
} from "../core/pipelines/pipeline-options.js";
import type { TalkRuntime } from "../core/session-types.js";
import { sessionControllerFactory } from "../core/pipelines/controller-factory.js";
import type { CallControlRegistry } from "../core/tools/call-control.js";
import { CallRegistry } from "./call-registry.js";
import { CallSession, type CallIdentity, type CallSettings } from "./call-session.js";
import { callEventsRoute } from "./call-events-route.js";
import { outboundCalls } from "./outbound-calls.js";
import { registerTelephonyMethods } from "./telephony-methods.js";
import { TelephonyStats } from "./telephony-stats.js";
import { twilioMediaStreamRoute } from "./twilio-media-stream.js";
import { StreamTokenStore } from "./twilio/stream-token-store.js";
import { parsePublicUrl } from "./twilio/twilio-signature.js";
import { TwilioRestClient } from "./twilio/twilio-rest-client.js";
import {
  isLoopbackAddress,
  TWILIO_STREAM_PATH,
  TWILIO_VOICE_PATH,
  twilioVoiceWebhook,
} from "./twilio/voice-webhook.js";

export interface TelephonyDeps {
  config: TelephonyConfig;
  server: Pick<TalkgateConfig["server"], "host" | "publicUrl">;
  /** The one authorizer (SurfaceContext.authorizer): admin places calls, write watches a call's events. */
  authorizer: RequestAuthorizer;
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
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process" | "inspect">;
  logger: TalkLogger;
}

export interface Telephony {
  readonly calls: CallRegistry;
  readonly stats: TelephonyStats;
  /** "signed" (Twilio configured), "unsigned-loopback" (local demo) or "disabled" (routes answer 503). */
  readonly mode: "signed" | "unsigned-loopback" | "disabled";
}

export async function registerTelephony(app: FastifyInstance, deps: TelephonyDeps): Promise<Telephony> {
  const { config, logger } = deps;
  const twilio = config.twilio;
  const authToken = twilio.authToken ?? "";
  const publicUrlRaw = twilio.publicUrl ?? deps.server.publicUrl;
  const publicUrl = publicUrlRaw === undefined ? undefined : parsePublicUrl(publicUrlRaw);
  if (authToken && publicUrl === undefined) {
    throw new TalkError(
      "config_invalid",
      "telephony: TWILIO_AUTH_TOKEN is set but PUBLIC_URL (server.publicUrl) is not; Twilio signs the public URL.",
    );
  }
  const loopback = isLoopbackAddress(deps.server.host) || deps.server.host === "localhost";
  const mode: Telephony["mode"] = authToken ? "signed" : loopback ? "unsigned-loopback" : "disabled";
  const rest =
    twilio.accountSid && authToken
      ? new TwilioRestClient({ accountSid: twilio.accountSid, authToken, baseUrl: twilio.apiBaseUrl })
      : undefined;
  const stats = new TelephonyStats();
  const calls = new CallRegistry(config.limits);
  const defaultMode: CallMode = config.defaultMode ?? (deps.realtimeAvailable ? "realtime" : "stt-tts");

  const settingsFor = (
    to: string | undefined,
    overrides: { mode?: CallMode; greeting?: string } = {},
  ): CallSettings => {
    const number = to !== undefined ? config.numbers[to] : undefined;
    const greeting = overrides.greeting ?? number?.greeting ?? config.greeting;
    return {
      mode: overrides.mode ?? number?.mode ?? defaultMode,
      greeting: greeting ? greeting : undefined,
      greetingProtectMs: config.greetingProtectMs,
      vad: config.vad,
      silenceTimeoutMs: Math.max(100, Math.round(deps.silenceTimeoutMs / 10) * 10),
      sendHighWaterBytes: config.limits.sendHighWaterBytes,
      hangUpTimeoutMs: config.hangUpTimeoutMs,
    };
  };
  const createController = sessionControllerFactory({
    providers: deps.providers,
    tools: deps.tools(),
    options: deps.pipelineOptions,
    logger,
  });
  const createCall = (
    identity: CallIdentity,
    overrides?: { mode?: CallMode; greeting?: string },
    metadata?: Record<string, string>,
  ): CallSession => {
    const call: CallSession = new CallSession(
      {
        runtime: deps.runtime,
        createController,
        ...(deps.pipelineOptions.interruptOnSpeech !== undefined
          ? { interruptOnSpeech: deps.pipelineOptions.interruptOnSpeech }
          : {}),
        callControls: deps.callControls,
        rest,
        stats,
        logger,
      },
      settingsFor(identity.to, overrides),
      identity,
      () => calls.remove(call),
      metadata,
    );
    return call;
  };

  const authorize = routeCheck(deps.authorizer, "admin");
  const outbound = outboundCalls({
    calls,
    rest,
    publicUrl,
    authToken,
    defaultFrom: twilio.defaultFrom,
    streamPath: TWILIO_STREAM_PATH,
    maxPending: config.limits.maxPendingOutboundCalls,
    authorize: (request) => authorize(request),
    createCall,
    localBaseUrl: () => loopbackBaseUrl(app),
    ...(deps.jobs ? { jobs: deps.jobs } : {}),
    logger,
  });
  if (deps.registerMethod && mode !== "disabled") registerTelephonyMethods(deps.registerMethod, outbound);
  const tokens = new StreamTokenStore();

  const plugin: FastifyPluginAsync = async (scope) => {
    if (mode === "disabled") {
      const unavailable = {
        error: new TalkError(
          "provider_unavailable",
          "Twilio is not configured: set TWILIO_AUTH_TOKEN, TWILIO_ACCOUNT_SID and PUBLIC_URL.",
        ).toJSON(),
      };
      for (const path of [TWILIO_VOICE_PATH, "/telephony/calls", "/telephony/twilio/status"]) {
        scope.post(path, async (_request, reply) => reply.code(503).send(unavailable));
      }
      scope.get(TWILIO_STREAM_PATH, async (_request, reply) => reply.code(503).send(unavailable));
      return;
    }
    await scope.register(
      twilioVoiceWebhook({
        authToken,
        publicUrl,
        tokens,
        logger,
        ...(mode === "unsigned-loopback" ? { unsignedLoopback: true } : {}),
      }),
    );
    await scope.register(outbound.plugin);
    await scope.register(callEventsRoute({ calls, authorize: routeCheck(deps.authorizer, "write") }));
    await scope.register(
      twilioMediaStreamRoute({
        calls,
        tokens,
        redeemOutbound: (token, callSid) => outbound.redeemer.redeem(token, callSid),
        createCall: (identity, mode) =>
          createCall(identity, mode === "realtime" || mode === "stt-tts" ? { mode } : {}),
        preStartTimeoutMs: config.limits.preStartTimeoutMs,
        maxPayloadBytes: config.limits.maxPayloadBytes,
        reconnectGraceMs: config.reconnectGraceMs,
        stats,
        logger,
      }),
    );
    scope.addHook("onClose", async () => {
      tokens.clear();
      await calls.closeAll("closed");
    });
  };
  await app.register(plugin);

  if (mode === "unsigned-loopback") {
    logger.warn(
      { voice: TWILIO_VOICE_PATH, stream: TWILIO_STREAM_PATH },
      "TELEPHONY IN LOCAL DEMO MODE: no TWILIO_AUTH_TOKEN, so unsigned webhooks are accepted from loopback peers only. Set TWILIO_AUTH_TOKEN and PUBLIC_URL before pointing a Twilio number here.",
    );
  } else if (mode === "disabled") {
    logger.warn({}, "telephony disabled: TWILIO_AUTH_TOKEN is not set; /telephony/* answer 503");
  } else {
    logger.info(
      { publicUrl, defaultMode, rest: rest !== undefined },
      "telephony: Twilio webhook and media streams ready",
    );
  }
  return { calls, stats, mode };
}
