/**
 * The media-stream WebSocket of one carrier (`<carrier paths.stream>`, e.g.
 * GET /telephony/twilio/stream): every message is decoded at the boundary by
 * the carrier's stream codec into a neutral event; a bad frame is counted
 * and logged and touches nothing else (an oversized one closes this call
 * with 1009). The stream is tied to a validated webhook by the one-time
 * token in the start's parameters: none, unknown, expired or reused closes
 * with 1008. Limits: pre-start time (1008), unstarted, total and per-address
 * sockets (1013), frame size (1009), send-buffer high-water (CallPlayout).
 */
import { createHash } from "node:crypto";
import type { FastifyPluginAsync } from "fastify";
import type { WebSocket } from "ws";
import type { TalkLogger } from "../core/index.js";
import { ULAW_8K } from "../core/index.js";
import type { CarrierProtocol, CarrierStreamCodec, CarrierStreamEvent } from "./carrier/carrier-protocol.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallIdentity, CallSession } from "./call-session.js";
import type { PlayoutLine } from "./playout/call-playout.js";
import { ClockAcknowledger } from "./playout/clock-acknowledger.js";
import type { StreamTokenStore } from "./stream-token-store.js";
import type { TelephonyStats } from "./telephony-stats.js";

export const CLOSE = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  tryAgainLater: 1013,
});

export interface MediaStreamRouteOptions {
  carrier: CarrierProtocol;
  calls: CallRegistry;
  /** Tokens of inbound calls (voice webhook), checked against start.callSid. */
  tokens: StreamTokenStore;
  /** Redeems a token of an outbound call we placed; undefined when it is not one. */
  redeemOutbound(token: string | undefined, callId: string): CallSession | undefined;
  /** Creates the call of a validated inbound stream (session created, not connected yet); `mode` from the webhook URL. */
  createCall(identity: CallIdentity, mode: string | undefined): CallSession;
  preStartTimeoutMs: number;
  maxPayloadBytes: number;
  reconnectGraceMs: number;
  stats: TelephonyStats;
  logger: TalkLogger;
}

export function mediaStreamRoute(o: MediaStreamRouteOptions): FastifyPluginAsync {
  return async (app) => {
    app.get(o.carrier.paths.stream, { websocket: true }, (socket, request) => {
      const codec = o.carrier.openStream({
        maxBytes: o.maxPayloadBytes,
        request: { url: request.url, headers: request.headers },
      });
      handleStream(o, codec, socket, request.socket.remoteAddress ?? "unknown");
    });
  };
}

function handleStream(
  o: MediaStreamRouteOptions,
  codec: CarrierStreamCodec,
  ws: WebSocket,
  ip: string,
): void {
  const carrier = o.carrier.id;
  const admitted = o.calls.admit(ip);
  if (!admitted.ok) {
    o.stats.refuseSocket(admitted.reason);
    o.logger.warn({ carrier, ip, reason: admitted.reason }, "media stream refused");
    ws.close(CLOSE.tryAgainLater, admitted.reason);
    return;
  }
  const { release, started } = admitted;
  let streamId: string | undefined;
  let call: CallSession | undefined;
  let stopped = false;
  const close = (code: number, reason: string): void => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
  };
  const preStart = setTimeout(() => {
    o.stats.refuseSocket("no start");
    close(CLOSE.policy, "no start message in time");
  }, o.preStartTimeoutMs);

  ws.on("error", (err) => o.logger.debug({ carrier, err: err.message, ip }, "media stream socket error"));
  ws.on("close", () => {
    clearTimeout(preStart);
    release();
    if (call && !stopped) call.detach(o.reconnectGraceMs);
  });
  ws.on("message", (data, isBinary) => {
    const decoded = codec.decode(data as Buffer | ArrayBuffer | Buffer[], isBinary);
    if (!decoded.ok) {
      const { reason, message, close: closeWith } = decoded.rejection;
      reject(reason, message);
      if (closeWith) close(closeWith.code, closeWith.reason);
      return;
    }
    const event = decoded.event;
    switch (event?.type) {
      case undefined:
        return;
      case "start":
        if (streamId !== undefined) return reject("duplicate_start", "start after start");
        void start(event);
        return;
      case "media":
        if (!call) return reject("before_start", "media before start");
        call.onMedia(event.audio);
        return;
      case "played":
        call?.onMark(event.name);
        return;
      case "dtmf":
        call?.onDtmf(event.digit);
        return;
      case "stop":
        stopped = true;
        void call?.close("completed");
        close(CLOSE.normal, "stopped");
        return;
    }
  });

  function reject(reason: string, message: string): void {
    const n = o.stats.rejectFrame(reason);
    // Logged with its reason, rate-limited per reason so a flood cannot flood the log.
    if (n <= 10 || n % 1000 === 0)
      o.logger.warn({ carrier, ip, streamId, reason, count: n }, `media stream frame rejected: ${message}`);
  }

  async function start(msg: Extract<CarrierStreamEvent, { type: "start" }>): Promise<void> {
    clearTimeout(preStart);
    streamId = msg.streamId;
    const callSid = msg.callId;
    const f = msg.format;
    // The call plays and hears u-law 8 kHz mono (the format every carrier offers for media streams).
    if (f?.encoding !== ULAW_8K.encoding || f.sampleRate !== ULAW_8K.sampleRate || f.channels !== 1) {
      close(CLOSE.policy, `media format must be u-law 8000 Hz mono, not ${msg.formatName}`.slice(0, 120));
      return;
    }
    const token = msg.parameters["token"];
    const found = callOfStream(o, token, callSid);
    if (!found.ok) {
      o.stats.refuseSocket(`token ${found.why}`);
      o.logger.warn({ carrier, ip, callId: callSid, reason: found.why }, "media stream: token refused");
      close(CLOSE.policy, `stream token ${found.why}`);
      return;
    }
    const target = found.call;
    started();
    call = target;
    o.stats.callsStarted++;
    // A carrier without playback acknowledgements: marks are reached by the clock instead of echoed.
    const acks =
      o.carrier.acknowledgements === "none"
        ? new ClockAcknowledger({ played: (name) => target.onMark(name) })
        : undefined;
    if (acks) ws.once("close", () => acks.close());
    const line = socketLine(ws, codec, acks);
    try {
      await target.connect(line, close, msg.streamId);
    } catch (err) {
      o.logger.error({ carrier, err, callId: callSid }, "media stream: the call's session could not start");
      await target.close("error", CLOSE.tryAgainLater);
    }
  }
}

/**
 * The call a stream's token opens: an inbound call (a token of the voice
 * webhook), an outbound call we placed, or a detached call resuming within
 * its grace (the same token, hashed, as when it started).
 */
function callOfStream(
  o: MediaStreamRouteOptions,
  token: string | undefined,
  callId: string,
): { ok: true; call: CallSession } | { ok: false; why: string } {
  const resumeKey = token ? createHash("sha256").update(token).digest("base64url") : undefined;
  const redeemed = o.tokens.consume(token, callId);
  if (redeemed.ok) {
    const call = o.createCall(
      {
        callSid: redeemed.call.callId,
        from: redeemed.call.from,
        to: redeemed.call.to,
        direction: redeemed.call.direction ?? "inbound",
      },
      redeemed.call.mode,
    );
    o.calls.add(call, resumeKey);
    return { ok: true, call };
  }
  const call =
    o.redeemOutbound(token, callId) ?? (resumeKey ? o.calls.resumable(callId, resumeKey) : undefined);
  if (call) {
    if (call.state === "created") o.calls.add(call, resumeKey);
    return { ok: true, call };
  }
  return { ok: false, why: !token ? "missing" : redeemed.reason };
}

/**
 * The playout's line over one socket, in the carrier's wire format. A burst
 * (media frames + its mark, or clear) is sent within one tick: corking the
 * TCP socket for the tick makes it one writev instead of one per message
 * (the largest cost of the relay when measured).
 */
function socketLine(
  ws: WebSocket,
  codec: CarrierStreamCodec,
  acks: ClockAcknowledger | undefined,
): PlayoutLine {
  const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket?.uncork();
  };
  const send = (frame: string | Uint8Array): void => {
    if (ws.readyState !== ws.OPEN) return;
    if (socket && !corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    ws.send(frame);
  };
  return {
    media: (audio) => {
      send(codec.media(audio));
      acks?.media(audio.byteLength);
    },
    mark: (name) => (acks ? acks.mark(name) : send(codec.mark(name))),
    clear: () => {
      send(codec.clear());
      acks?.clear();
    },
    flush: () => {
      if (corked) uncork(); // the uncork already queued for the tick then finds nothing corked
    },
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
  };
}
