/**
 * The telephony surface as one encapsulated Fastify plugin over the surface
 * context: a carrier's voice webhook, its media-stream WebSocket, outbound
 * calls and their status callbacks, the call-events stream, and
 * `telephony.call` / `telephony.call.get` on the Talk API. Calls are closed
 * when the app closes.
 *
 * Carrier not configured: with no credentials on a loopback server the
 * routes run in local demo mode (unsigned webhooks from loopback peers only,
 * logged loudly at start-up), which is what `talkgate call` uses; on any
 * other host they answer 503 naming the missing settings. Credentials without
 * a public URL are a configuration error at start-up.
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { TalkgateConfig } from "../config/index.js";
import type { CallMode, TelephonyConfig } from "../config/index.js";
import { TalkError } from "../core/index.js";
import type { CallControlRegistry } from "../core/index.js";
import { routeCheck, type SurfaceContext } from "../gateway/index.js";
import { answerWebhook } from "./answer-webhook.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { CallRegistry } from "./call-registry.js";
import { callFactory, type CreateCall } from "./call-factory.js";
import { callEventsRoute } from "./call-events-route.js";
import { mediaStreamRoute } from "./media-stream-route.js";
import { outboundCalls, type OutboundCalls } from "./outbound/outbound-calls.js";
import { isLoopbackAddress, parsePublicUrl } from "./public-url.js";
import { StreamTokenStore } from "./stream-token-store.js";
import { registerTelephonyMethods } from "./telephony-methods.js";
import { TelephonyStats } from "./telephony-stats.js";

/** The call-specific part of the telephony surface; everything shared comes from the SurfaceContext. */
export interface TelephonyPluginOptions {
  config: TelephonyConfig;
  server: Pick<TalkgateConfig["server"], "host" | "publicUrl">;
  /** The carrier this server speaks (configuredCarrier(config)). */
  carrier: CarrierProtocol;
  /** The carrier's own public URL setting; default server.publicUrl. */
  carrierPublicUrl?: string | undefined;
  /** talk.input.silenceTimeoutMs: silence that ends a caller's turn (stt-tts). */
  silenceTimeoutMs: number;
  callControls: CallControlRegistry;
  /** A realtime provider that can be relayed is configured (the default mode is then realtime). */
  realtimeAvailable: boolean;
}

/** The plugin, with the surface's handle (its calls, stats and mode) for the composition root and tests. */
export type TelephonyPlugin = FastifyPluginAsync & { readonly telephony: Telephony };

export interface Telephony {
  readonly calls: CallRegistry;
  readonly stats: TelephonyStats;
  /** "signed" (carrier configured), "unsigned-loopback" (local demo) or "disabled" (routes answer 503). */
  readonly mode: "signed" | "unsigned-loopback" | "disabled";
}

export function telephonyPlugin(ctx: SurfaceContext, options: TelephonyPluginOptions): TelephonyPlugin {
  const { config, carrier } = options;
  const logger = ctx.logger;
  const { publicUrl, mode } = telephonyMode(options);
  const stats = new TelephonyStats();
  const calls = new CallRegistry(config.limits);
  const { createCall, defaultMode } = callFactory({
    config,
    silenceTimeoutMs: options.silenceTimeoutMs,
    realtimeAvailable: options.realtimeAvailable,
    context: {
      runtime: ctx.runtime,
      createController: ctx.createController,
      callControls: options.callControls,
      rest: carrier.rest,
      stats,
      logger,
    },
    calls,
  });

  // Admin places calls.
  const outbound = outboundCalls({
    carrier,
    calls,
    publicUrl,
    maxPending: config.limits.maxPendingOutboundCalls,
    authorize: routeCheck(ctx.authorizer, "admin"),
    createCall,
    localBaseUrl: () => ctx.loopbackBaseUrl(),
    jobs: ctx.jobs,
    logger,
  });
  if (mode !== "disabled") registerTelephonyMethods((name, d) => ctx.registerMethod(name, d), outbound);
  const surface: TelephonySurface = { ctx, options, mode, publicUrl, calls, stats, createCall, outbound };
  const plugin: FastifyPluginAsync = async (scope) => {
    logStart(ctx, carrier, mode, { publicUrl, defaultMode });
    if (mode === "disabled") disabledRoutes(scope, carrier);
    else await servedRoutes(scope, surface);
  };
  return Object.assign(plugin, { telephony: { calls, stats, mode } satisfies Telephony });
}

/**
 * The carrier's public URL and the surface's mode. Credentials without a
 * public URL are a configuration error (the carrier signs the public URL).
 */
function telephonyMode(options: TelephonyPluginOptions): {
  publicUrl: string | undefined;
  mode: Telephony["mode"];
} {
  const { carrier } = options;
  const publicUrlRaw = options.carrierPublicUrl ?? options.server.publicUrl;
  const publicUrl = publicUrlRaw === undefined ? undefined : parsePublicUrl(publicUrlRaw);
  if (carrier.signed && publicUrl === undefined) {
    throw new TalkError(
      "config_invalid",
      `telephony: ${carrier.name} credentials are set but PUBLIC_URL (server.publicUrl) is not; ${carrier.name} signs the public URL.`,
    );
  }
  const host = options.server.host;
  const loopback = isLoopbackAddress(host) || host === "localhost";
  return { publicUrl, mode: carrier.signed ? "signed" : loopback ? "unsigned-loopback" : "disabled" };
}

/** Carrier not configured on a non-loopback host: every telephony route answers 503 naming the missing settings. */
function disabledRoutes(scope: FastifyInstance, carrier: CarrierProtocol): void {
  const unavailable = {
    error: new TalkError(
      "provider_unavailable",
      `${carrier.name} is not configured: set ${carrier.missingSettings}.`,
    ).toJSON(),
  };
  for (const path of [carrier.paths.voice, "/telephony/calls", carrier.paths.status]) {
    scope.post(path, async (_request, reply) => reply.code(503).send(unavailable));
  }
  scope.get(carrier.paths.stream, async (_request, reply) => reply.code(503).send(unavailable));
}

/** What the served routes are built from (assembled once by telephonyPlugin). */
interface TelephonySurface {
  ctx: SurfaceContext;
  options: TelephonyPluginOptions;
  mode: Telephony["mode"];
  publicUrl: string | undefined;
  calls: CallRegistry;
  stats: TelephonyStats;
  createCall: CreateCall;
  outbound: OutboundCalls;
}

/** The voice webhook, outbound calls, the call-events stream and the media stream; calls close with the app. */
async function servedRoutes(scope: FastifyInstance, surface: TelephonySurface): Promise<void> {
  const { ctx, options, mode, publicUrl, calls, stats, createCall, outbound } = surface;
  const { carrier, config } = options;
  const logger = ctx.logger;
  const tokens = new StreamTokenStore();
  await scope.register(
    answerWebhook({
      carrier,
      publicUrl,
      tokens,
      logger,
      draining: ctx.draining,
      ...(mode === "unsigned-loopback" ? { unsignedLoopback: true } : {}),
    }),
  );
  await scope.register(outbound.plugin);
  // Write watches a call's events (what `talkgate call` needs without a token on loopback).
  await scope.register(callEventsRoute({ calls, authorize: routeCheck(ctx.authorizer, "write") }));
  await scope.register(
    mediaStreamRoute({
      carrier,
      calls,
      tokens,
      redeemOutbound: (token, callId) => outbound.redeemer.redeem(token, callId),
      createCall: (identity, callMode) =>
        createCall(identity, callMode === "realtime" || callMode === "stt-tts" ? { mode: callMode } : {}),
      preStartTimeoutMs: config.limits.preStartTimeoutMs,
      maxPayloadBytes: config.limits.maxPayloadBytes,
      reconnectGraceMs: config.reconnectGraceMs,
      stats,
      logger,
      draining: ctx.draining,
    }),
  );
  scope.addHook("onClose", async () => {
    tokens.clear();
    outbound.close();
    await calls.closeAll("closed");
  });
}

function logStart(
  ctx: SurfaceContext,
  carrier: CarrierProtocol,
  mode: Telephony["mode"],
  details: { publicUrl: string | undefined; defaultMode: CallMode },
): void {
  const { voice, stream } = carrier.paths;
  if (mode === "unsigned-loopback") {
    ctx.logger.warn(
      { carrier: carrier.id, voice, stream },
      `TELEPHONY IN LOCAL DEMO MODE: no ${carrier.name} credentials, so unsigned webhooks are accepted from loopback peers only. Set ${carrier.missingSettings} before pointing a ${carrier.name} number here.`,
    );
  } else if (mode === "disabled") {
    ctx.logger.warn(
      { carrier: carrier.id },
      `telephony disabled: ${carrier.name} is not configured; /telephony/* answer 503`,
    );
  } else {
    ctx.logger.info(
      { carrier: carrier.id, ...details, rest: carrier.rest !== undefined },
      `telephony: ${carrier.name} webhook and media streams ready`,
    );
  }
}
