/**
 * The telephony surface as one encapsulated Fastify plugin over the surface
 * context: every carrier's voice webhook, media-stream WebSocket and status
 * callbacks, outbound calls through any of them, the call-events stream, and
 * `telephony.call` / `telephony.call.get` on the Talk API. The carriers share
 * one call registry (the limits are per process), one set of stats and one
 * stream-token issuer, whose tokens any worker of the cluster verifies, so a
 * call's stream may reach another worker than its webhook. Calls are closed
 * when the app closes.
 *
 * A carrier not configured: with no credentials on a loopback server its
 * routes run in local demo mode (unsigned webhooks from loopback peers only,
 * logged loudly at start-up), which is what `talkgate call` uses; on any
 * other host they answer 503 naming the missing settings. Credentials without
 * a public URL are a configuration error at start-up.
 */
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { OneTimeClaims } from "../cluster/index.js";
import type { TalkgateConfig } from "../config/index.js";
import type { CallMode, TelephonyConfig } from "../config/index.js";
import { LimitedLog, TalkError } from "../core/index.js";
import type { CallControlRegistry } from "../core/index.js";
import { routeCheck, type SurfaceContext } from "../gateway/index.js";
import { answerWebhook } from "./answer-webhook.js";
import { briefingRoute, type RenderSpeech } from "./briefing-route.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import type { ConfiguredCarrier } from "./carriers.js";
import { CallRegistry } from "./call-registry.js";
import { callFactory, type CreateCall } from "./call-factory.js";
import type { CallCarrier } from "./call-session.js";
import type { CallDirectory } from "./call-directory.js";
import { callEventsRoute } from "./call-events-route.js";
import { lineAudio } from "./line-audio.js";
import { mediaStreamRoute } from "./media-stream-route.js";
import { outboundCalls, type OutboundCalls } from "./outbound/outbound-calls.js";
import { DocumentSigner, transferDocuments } from "./document-urls.js";
import { isLoopbackAddress, parsePublicUrl } from "./public-url.js";
import { StreamTokens } from "./stream-tokens.js";
import type { DetectionWorkers } from "./amd/amd-callbacks.js";
import { callRecordingPolicy } from "./recording/recording-policy.js";
import { registerTelephonyMethods } from "./telephony-methods.js";
import { TelephonyStats } from "./telephony-stats.js";

/** The call-specific part of the telephony surface; everything shared comes from the SurfaceContext. */
export interface TelephonyPluginOptions {
  config: TelephonyConfig;
  server: Pick<TalkgateConfig["server"], "host" | "publicUrl">;
  /** The carriers this server speaks (configuredCarriers(config)), each with its own public URL setting. */
  carriers: readonly ConfiguredCarrier[];
  /** The carrier outbound calls use when they name none (defaultCarrierId). */
  defaultCarrier: string;
  /** Single-use stream tokens and their signing secret, shared by every worker (coordinator.claims). */
  claims: OneTimeClaims;
  /** This worker in the cluster: an AMD callback reaching another worker is relayed to the one that dialled. */
  detectionWorkers?: DetectionWorkers | undefined;
  /** The calls of the other workers: a call's events are served by every worker. Absent: this worker's only. */
  callDirectory?: CallDirectory | undefined;
  /** talk.input.silenceTimeoutMs: silence that ends a caller's turn (stt-tts). */
  silenceTimeoutMs: number;
  callControls: CallControlRegistry;
  /** A realtime provider that can be relayed is configured (the default mode is then realtime). */
  realtimeAvailable: boolean;
  /** The local TTS: speaks a transfer's briefing for carriers that play an audio file (Telnyx). */
  renderSpeech?: RenderSpeech | undefined;
  /** The data directory: call recordings go to `<dataDir>/recordings/` (telephony.recording). */
  dataDir?: string;
}

/** The plugin, with the surface's handle (its calls, stats and modes) for the composition root and tests. */
export type TelephonyPlugin = FastifyPluginAsync & { readonly telephony: Telephony };

/** "signed" (carrier configured), "unsigned-loopback" (local demo) or "disabled" (routes answer 503). */
export type CarrierMode = "signed" | "unsigned-loopback" | "disabled";

export interface Telephony {
  readonly calls: CallRegistry;
  readonly stats: TelephonyStats;
  /** The default carrier's mode. */
  readonly mode: CarrierMode;
  /** Every carrier's mode, by id. */
  readonly modes: Readonly<Record<string, CarrierMode>>;
}

/** One carrier as the surface serves it. */
interface ServedCarrier {
  carrier: CarrierProtocol;
  callCarrier: CallCarrier;
  publicUrl: string | undefined;
  mode: CarrierMode;
}

export function telephonyPlugin(ctx: SurfaceContext, options: TelephonyPluginOptions): TelephonyPlugin {
  const { config } = options;
  const logger = ctx.logger;
  const signer = new DocumentSigner(options.claims);
  const carriers = options.carriers.map((c) =>
    servedCarrier(c, options.server, () => ctx.loopbackBaseUrl(), signer),
  );
  const served = carriers.filter((c) => c.mode !== "disabled");
  const stats = new TelephonyStats();
  const calls = new CallRegistry(config.limits);
  const tokens = new StreamTokens({ claims: options.claims });
  // Refusals of peers that never authenticated (forged tokens and signatures), rejected frames, refused
  // sockets: one rate-limited log for every carrier's routes, 10 lines per reason a minute, then a count.
  const refusals = new LimitedLog(logger);
  const { createCall, defaultMode } = callFactory({
    config,
    silenceTimeoutMs: options.silenceTimeoutMs,
    realtimeAvailable: options.realtimeAvailable,
    context: {
      runtime: ctx.runtime,
      createController: ctx.createController,
      callControls: options.callControls,
      stats,
      recording: callRecordingPolicy(config, options.dataDir),
      logger,
    },
    calls,
  });

  // Admin places calls.
  const outbound = outboundCalls({
    carriers: served,
    defaultCarrier: options.defaultCarrier,
    calls,
    tokens,
    maxPending: config.limits.maxPendingOutboundCalls,
    amd: { config: config.amd, hangUpTimeoutMs: config.hangUpTimeoutMs },
    authorize: routeCheck(ctx.authorizer, "admin"),
    createCall,
    localBaseUrl: () => ctx.loopbackBaseUrl(),
    jobs: ctx.jobs,
    workers: options.detectionWorkers,
    logger,
    refusals,
  });
  if (served.length > 0) registerTelephonyMethods((name, d) => ctx.registerMethod(name, d), outbound);
  const surface: TelephonySurface = {
    ctx,
    options,
    calls,
    stats,
    tokens,
    signer,
    createCall,
    outbound,
    refusals,
  };
  const plugin: FastifyPluginAsync = async (scope) => {
    logStart(ctx, carriers, defaultMode);
    for (const c of carriers.filter((c) => c.mode === "disabled")) disabledRoutes(scope, c.carrier);
    if (served.length > 0) await servedRoutes(scope, surface, served);
    else disabledOutboundRoutes(scope, carriers);
  };
  const modes = Object.fromEntries(carriers.map((c) => [c.carrier.id, c.mode]));
  const mode = modes[options.defaultCarrier] ?? "disabled";
  return Object.assign(plugin, { telephony: { calls, stats, mode, modes } satisfies Telephony });
}

/**
 * A carrier's public URL, line and mode. Credentials without a public URL are
 * a configuration error (carriers sign the public URL).
 */
function servedCarrier(
  configured: ConfiguredCarrier,
  server: TelephonyPluginOptions["server"],
  loopbackBase: () => string | undefined,
  signer: DocumentSigner,
): ServedCarrier {
  const { carrier } = configured;
  const publicUrlRaw = configured.publicUrl ?? server.publicUrl;
  const publicUrl = publicUrlRaw === undefined ? undefined : parsePublicUrl(publicUrlRaw);
  if (carrier.signed && publicUrl === undefined) {
    throw new TalkError(
      "config_invalid",
      `telephony: ${carrier.name} credentials are set but PUBLIC_URL (server.publicUrl) is not; ${carrier.name} signs the public URL.`,
    );
  }
  const loopback = isLoopbackAddress(server.host) || server.host === "localhost";
  const mode: CarrierMode = carrier.signed ? "signed" : loopback ? "unsigned-loopback" : "disabled";
  const callCarrier: CallCarrier = {
    id: carrier.id,
    rest: carrier.rest,
    line: lineAudio(carrier.lineFormat),
    transferDocuments: () => {
      const base = publicUrl ?? loopbackBase();
      return base === undefined ? undefined : transferDocuments(carrier, base, signer);
    },
    playbackBufferMs: carrier.playbackBufferMs,
    maxFramesPerMessage: carrier.maxFramesPerMessage,
  };
  return { carrier, callCarrier, publicUrl, mode };
}

function unavailable(carrier: CarrierProtocol): { error: unknown } {
  return {
    error: new TalkError(
      "provider_unavailable",
      `${carrier.name} is not configured: set ${carrier.missingSettings}.`,
    ).toJSON(),
  };
}

/** A carrier not configured on a non-loopback host: its routes answer 503 naming the missing settings. */
function disabledRoutes(scope: FastifyInstance, carrier: CarrierProtocol): void {
  const body = unavailable(carrier);
  const methods = carrier.voiceMethods ?? ["POST"];
  scope.route({
    method: [...methods],
    url: carrier.paths.voice,
    handler: async (_r, reply) => reply.code(503).send(body),
  });
  scope.post(carrier.paths.status, async (_request, reply) => reply.code(503).send(body));
  scope.get(carrier.paths.stream, async (_request, reply) => reply.code(503).send(body));
}

/** No carrier served at all: placing calls answers 503 naming the first carrier's missing settings. */
function disabledOutboundRoutes(scope: FastifyInstance, carriers: readonly ServedCarrier[]): void {
  const first = carriers[0];
  if (!first) return;
  const body = unavailable(first.carrier);
  scope.post("/telephony/calls", async (_request, reply) => reply.code(503).send(body));
}

/** What the served routes are built from (assembled once by telephonyPlugin). */
interface TelephonySurface {
  ctx: SurfaceContext;
  options: TelephonyPluginOptions;
  calls: CallRegistry;
  stats: TelephonyStats;
  tokens: StreamTokens;
  signer: DocumentSigner;
  createCall: CreateCall;
  outbound: OutboundCalls;
  refusals: LimitedLog;
}

/** Each served carrier's voice webhook and media stream, outbound calls and the call-events stream; calls close with the app. */
async function servedRoutes(
  scope: FastifyInstance,
  surface: TelephonySurface,
  served: readonly ServedCarrier[],
): Promise<void> {
  const { ctx, options, calls, stats, tokens, signer, createCall, outbound, refusals } = surface;
  const { config } = options;
  const logger = ctx.logger;
  for (const { carrier, callCarrier, publicUrl, mode } of served) {
    await scope.register(
      answerWebhook({
        carrier,
        publicUrl,
        tokens,
        logger,
        refusals,
        draining: ctx.draining,
        ...(mode === "unsigned-loopback" ? { unsignedLoopback: true } : {}),
      }),
    );
    await scope.register(
      mediaStreamRoute({
        carrier,
        publicUrl,
        callCarrier,
        calls,
        tokens,
        outbound: outbound.redeemer(carrier.id),
        createCall: (line, identity, callMode) =>
          createCall(
            line,
            identity,
            callMode === "realtime" || callMode === "stt-tts" ? { mode: callMode } : {},
          ),
        preStartTimeoutMs: config.limits.preStartTimeoutMs,
        maxPayloadBytes: config.limits.maxPayloadBytes,
        reconnectGraceMs: config.reconnectGraceMs,
        stats,
        logger,
        refusals,
        draining: ctx.draining,
      }),
    );
    await scope.register(
      briefingRoute({ carrier, publicUrl, signer, renderSpeech: options.renderSpeech, logger, refusals }),
    );
  }
  await scope.register(outbound.plugin);
  // Write watches a call's events (what `talkgate call` needs without a token on loopback), on any worker.
  const directory = options.callDirectory;
  const stopAnswering = directory?.answer((callId) => calls.get(callId)?.session.id);
  await scope.register(callEventsRoute({ calls, directory, authorize: routeCheck(ctx.authorizer, "write") }));
  scope.addHook("onClose", async () => {
    stopAnswering?.();
    outbound.close();
    await calls.closeAll("closed");
    // What the open windows held back is written now, not lost with the process.
    refusals.close();
  });
}

/**
 * One start-up line per carrier that is served or refused, and one for all the carriers in local demo
 * mode together (four such lines were a third of a newcomer's start-up log).
 */
function logStart(ctx: SurfaceContext, carriers: readonly ServedCarrier[], defaultMode: CallMode): void {
  const demo = carriers.filter((c) => c.mode === "unsigned-loopback").map((c) => c.carrier);
  if (demo.length > 0) {
    ctx.logger.warn(
      { carriers: demo.map((carrier) => carrier.id) },
      `telephony in local demo mode (no credentials for ${demo.map((c) => c.name).join(", ")}): unsigned webhooks are accepted from loopback only. Set a carrier's credentials and PUBLIC_URL before pointing a number here (docs/telephony.md).`,
    );
  }
  for (const { carrier, mode, publicUrl } of carriers) {
    if (mode === "disabled") {
      ctx.logger.warn(
        { carrier: carrier.id },
        `telephony: ${carrier.name} is not configured; its routes answer 503`,
      );
    } else if (mode === "signed") {
      ctx.logger.info(
        { carrier: carrier.id, publicUrl, defaultMode, rest: carrier.rest !== undefined },
        `telephony: ${carrier.name} webhook and media streams ready`,
      );
    }
  }
}
