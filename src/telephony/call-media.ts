/**
 * A call's media path, built once per call: the playout toward the carrier
 * and the core media leg (u-law passthrough to a realtime provider that
 * speaks it, PCM at the line's rate otherwise; the provider's or the local
 * VAD's turn-taking), both timed by the call's latency figures
 * (latency.metrics events, also counted in the telephony stats).
 *
 * A realtime call hears its caller as talk.input configures it: passthrough
 * and the provider's turns (the default); with echoCancellation.realtime,
 * PCM cleaned against the playout's reference and a local gate deciding
 * barge-in; with turnEnd "talkgate", the local VAD and endpoint ending turns
 * (the provider's turn detection off). See docs/telephony.md.
 */
import { type TalkSession } from "../core/index.js";
import { MediaLeg, type MediaLegAdapter } from "../voice/index.js";
import { CallLatency } from "./call-latency.js";
import type { CallCarrier, CallSessionContext, CallSettings } from "./call-types.js";
import { CallPlayout } from "./playout/call-playout.js";

export interface CallMedia {
  playout: CallPlayout;
  leg: MediaLeg;
}

export function createCallMedia(
  ctx: CallSessionContext,
  carrier: CallCarrier,
  settings: CallSettings,
  session: TalkSession,
  call: Pick<MediaLegAdapter, "interruptible" | "legClosed">,
): CallMedia {
  const realtime = settings.mode === "realtime";
  const { echo, turns } = ctx.createController;
  // Realtime calls cancel echo only when configured and the process has a canceller (else: passthrough as before).
  const realtimeEcho = realtime && echo.realtime && echo.options.enabled && echo.create !== undefined;
  const localTurns = !realtime || turns.turnEnd === "talkgate";
  const vad = {
    threshold: settings.vad.threshold,
    minSpeechMs: settings.vad.minSpeechMs,
    silenceMs: settings.silenceTimeoutMs,
  };
  const latency = new CallLatency({
    emit: (payload) => {
      ctx.stats?.recordLatency(payload.name, payload.ms);
      if (session.state === "active") session.emit({ type: "latency.metrics", payload, source: "telephony" });
    },
  });
  const playout = new CallPlayout({
    line: carrier.line,
    sendHighWaterBytes: settings.sendHighWaterBytes,
    ...(carrier.playbackBufferMs !== undefined ? { maxUnplayedMs: carrier.playbackBufferMs } : {}),
    ...(carrier.maxFramesPerMessage !== undefined
      ? { maxFramesPerMessage: carrier.maxFramesPerMessage }
      : {}),
    onClearSent: () => latency.clearSent(),
    onItemFirstFrame: () => latency.itemFirstFrame(),
  });
  // The leg reads its sink as it is built: the playout, made first.
  const adapter: MediaLegAdapter = {
    sink: playout,
    playing: () => playout.playing,
    interruptible: (output) => call.interruptible?.(output) ?? true,
    legClosed: (reason) => call.legClosed(reason),
  };
  const leg = new MediaLeg({
    session,
    createController: ctx.createController,
    adapter,
    format: carrier.line.pcmFormat,
    // No transcoding when the realtime provider speaks the line's format (u-law) and the audio needs no
    // cleaning or local turns; PCM at the line's rate otherwise.
    ...(realtime && !realtimeEcho && !localTurns ? { passthrough: carrier.line.format } : {}),
    turnTaking: localTurns
      ? { kind: "local-vad", ...vad }
      : realtimeEcho
        ? { kind: "provider", localBargeIn: vad }
        : { kind: "provider" },
    // The realtime provider's speech events are timed as they reach the call (latency.metrics).
    wrapProviders: (base) => ({
      stt: (s) => base.stt(s),
      tts: (s) => base.tts(s),
      agent: (s) => base.agent(s),
      realtime: (s) => {
        const provider = base.realtime(s);
        return provider && latency.timedRealtime(provider);
      },
    }),
    observer: {
      bargeInDetected: (source) => latency.bargeInDetected(source),
      bargeInHandled: () => latency.bargeInHandled(),
      speechEnded: (source, endpointMs) => latency.speechEnded(source, endpointMs),
    },
    // The playout mirrors what the carrier plays: the reference of the leg's echo canceller.
    echoReference: !realtime || realtimeEcho,
    logger: ctx.logger,
  });
  return { playout, leg };
}
