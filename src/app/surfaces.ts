/**
 * The surfaces of the composition root: the one SurfaceContext (built once,
 * the same for every surface), then meetings and telephony over it.
 */
import type { AppCluster } from "../app-cluster.js";
import type { TalkgateConfig } from "../config/index.js";
import type { TalkLogger } from "../core/index.js";
import type { SessionControllerFactory } from "../voice/index.js";
import type { TalkRuntime } from "../core/index.js";
import {
  isLoopbackHost,
  loopbackBaseUrl,
  replyError,
  type GatewayServer,
  type SurfaceContext,
} from "../gateway/index.js";
import {
  defaultPlatformDrivers,
  meetingsPlugin,
  VoiceWakeStore,
  type BrowserLauncher,
} from "../meetings/index.js";
import { localSpeech } from "./faults.js";
import type { AppProviders } from "./providers.js";
import type { AppTools } from "./tools.js";

export interface SurfaceContextInputs {
  runtime: TalkRuntime;
  createController: SessionControllerFactory;
  gateway: GatewayServer;
  /** Cluster jobs, given to surfaces only when Redis makes a queue worth using. */
  jobs: AppCluster["jobs"] | undefined;
  /** True while the worker drains (the cluster's drain began) or the app closes. */
  draining: () => boolean;
  logger: TalkLogger;
}

/** The one context every surface plugin is built over. */
export function surfaceContext(i: SurfaceContextInputs): SurfaceContext {
  const { gateway } = i;
  return Object.freeze({
    runtime: i.runtime,
    createController: i.createController,
    authorizer: gateway.authorizer,
    jobs: i.jobs,
    registerMethod: (name, definition) => gateway.registerMethod(name, definition),
    broadcast: (event, payload) => gateway.broadcast(event, payload),
    replyError,
    loopbackBaseUrl: () => loopbackBaseUrl(gateway.app),
    draining: i.draining,
    logger: i.logger,
  } satisfies SurfaceContext);
}

export interface SurfacesInputs {
  config: TalkgateConfig;
  ctx: SurfaceContext;
  gateway: GatewayServer;
  cluster: AppCluster;
  providers: AppProviders;
  tools: AppTools;
  /** The bots' browser launcher (CreateAppOptions.meetingBrowsers); default one Chromium per bot. */
  meetingBrowsers?: BrowserLauncher | undefined;
}

/**
 * Meetings: bot routes, the bot pages' capture socket, the local test
 * meeting and the meetings / voicewake Talk API methods (src/meetings).
 * Wake triggers (seed 004): configured defaults until voicewake.set; stored
 * as the cluster's shared setting `voicewake`, heard by every worker.
 */
export async function registerMeetings(i: SurfacesInputs): Promise<VoiceWakeStore> {
  const { config, ctx } = i;
  const voiceWake = await VoiceWakeStore.open({
    settings: i.cluster.coordinator.settings,
    defaults: config.meetings.wakeTriggers,
    logger: ctx.logger,
  });
  for (const key of ["googleMeet", "zoom", "teams"] as const) {
    const testOrigins = config.meetings[key].testOrigins;
    if (testOrigins.length === 0) continue;
    ctx.logger.warn(
      { testOrigins },
      `meetings.${key}.testOrigins is set: the ${key} driver also joins meetings at these origins (tests and development only)`,
    );
  }
  const { enabled, ...testRoomLimits } = config.meetings.testRoom;
  // The test room relays anything between its peers: served by default only on a loopback server without auth.
  const testRoom = enabled ?? (config.auth.tokens.length === 0 && isLoopbackHost(config.server.host));
  if (testRoom && config.auth.tokens.length > 0) {
    ctx.logger.warn(
      { maxSockets: testRoomLimits.maxSockets },
      "meetings.testRoom.enabled: the local test meeting is served (its socket needs a write token)",
    );
  }
  await i.gateway.app.register(
    meetingsPlugin(ctx, {
      testRoom: testRoom ? testRoomLimits : false,
      options: config.meetings,
      dataDir: config.dataDir,
      drivers: defaultPlatformDrivers({
        googleMeet: config.meetings.googleMeet,
        zoom: config.meetings.zoom,
        teams: config.meetings.teams,
        ...(testRoom
          ? { testRoom: { origins: () => ownOrigins(ctx.loopbackBaseUrl(), config.server.publicUrl) } }
          : {}),
      }),
      voiceWake,
      ...(i.meetingBrowsers ? { launcher: i.meetingBrowsers } : {}),
    }),
  );
  return voiceWake;
}

/**
 * Telephony: the carrier's voice webhook, media streams, outbound calls
 * (src/telephony, docs/telephony.md); telephony.call on the Talk API (admin);
 * with Redis, outbound calls are `outbound-call` jobs on media workers.
 */
export async function registerTelephonySurface(i: SurfacesInputs): Promise<void> {
  const { config, ctx } = i;
  const {
    clusterCallDirectory,
    clusterDetectionWorkers,
    configuredCarriers,
    defaultCarrierId,
    telephonyPlugin,
  } = await import("../telephony/index.js");
  const carriers = configuredCarriers(config.telephony);
  await i.gateway.app.register(
    telephonyPlugin(ctx, {
      config: config.telephony,
      server: config.server,
      carriers,
      defaultCarrier: defaultCarrierId(config.telephony, carriers),
      claims: i.cluster.coordinator.claims,
      detectionWorkers: clusterDetectionWorkers(i.cluster.coordinator),
      callDirectory: clusterCallDirectory(i.cluster.coordinator),
      silenceTimeoutMs: config.talk.input.silenceTimeoutMs,
      callControls: i.tools.callControls,
      realtimeAvailable: i.providers.realtimeRelayAvailable(),
      renderSpeech: localSpeech(i.providers.registry),
      dataDir: config.dataDir,
    }),
  );
}

/**
 * The origins this server answers at: its loopback base URL (and the same
 * port as `localhost`), and `server.publicUrl`'s. The test room's driver
 * takes meeting URLs on these only.
 */
function ownOrigins(loopback: string | undefined, publicUrl: string | undefined): string[] {
  const out: string[] = [];
  if (loopback) {
    const url = new URL(loopback);
    out.push(url.origin);
    if (url.hostname === "127.0.0.1" || url.hostname === "[::1]")
      out.push(`${url.protocol}//localhost:${url.port}`);
  }
  if (publicUrl) out.push(new URL(publicUrl).origin);
  return out;
}
