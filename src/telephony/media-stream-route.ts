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
import { sameAudioFormat, ULAW_8K, WindowedLogLimiter } from "../core/index.js";
import type { CarrierProtocol, CarrierStreamCodec, CarrierStreamEvent } from "./carrier/carrier-protocol.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallIdentity, CallSession } from "./call-session.js";
import type { PlayoutLine } from "./playout/call-playout.js";
import { ClockAcknowledger } from "./playout/clock-acknowledger.js";
import { socketLine } from "./socket-line.js";
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
  /** True while the worker drains: new streams are refused with 1013. Default never. */
  draining?: () => boolean;
  /** Rate limit of the frame-rejection log lines, per reason per window (default: one per route, 10 a minute). */
  rejectLog?: WindowedLogLimiter;
}

export function mediaStreamRoute(options: MediaStreamRouteOptions): FastifyPluginAsync {
  const o = { ...options, rejectLog: options.rejectLog ?? new WindowedLogLimiter() };
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
  const admitted = o.draining?.() === true ? { ok: false as const, reason: "draining" } : o.calls.admit(ip);
  if (!admitted.ok) {
    o.stats.refuseSocket(admitted.reason);
    o.logger.warn({ carrier: o.carrier.id, ip, reason: admitted.reason }, "media stream refused");
    ws.close(CLOSE.tryAgainLater, admitted.reason);
    return;
  }
  new CarrierStreamSocket(o, codec, ws, ip, admitted);
}

/**
 * One admitted media-stream socket: waits for the start (pre-start timer),
 * ties the stream to its call by token, then hands each decoded event to the
 * call. A socket closed before the carrier's stop detaches the call (it may
 * resume within its reconnect grace).
 */
class CarrierStreamSocket {
  readonly #o: MediaStreamRouteOptions;
  readonly #codec: CarrierStreamCodec;
  readonly #ws: WebSocket;
  readonly #ip: string;
  readonly #admission: { release(): void; started(): void };
  readonly #preStart: NodeJS.Timeout;
  #streamId: string | undefined;
  #call: CallSession | undefined;
  #stopped = false;

  constructor(
    o: MediaStreamRouteOptions,
    codec: CarrierStreamCodec,
    ws: WebSocket,
    ip: string,
    admission: { release(): void; started(): void },
  ) {
    this.#o = o;
    this.#codec = codec;
    this.#ws = ws;
    this.#ip = ip;
    this.#admission = admission;
    this.#preStart = setTimeout(() => {
      o.stats.refuseSocket("no start");
      this.#close(CLOSE.policy, "no start message in time");
    }, o.preStartTimeoutMs);
    const carrier = o.carrier.id;
    ws.on("error", (err) => o.logger.debug({ carrier, err: err.message, ip }, "media stream socket error"));
    ws.on("close", () => {
      clearTimeout(this.#preStart);
      admission.release();
      if (this.#call && !this.#stopped) this.#call.detach(o.reconnectGraceMs);
    });
    ws.on("message", (data, isBinary) => this.#onMessage(data as Buffer | ArrayBuffer | Buffer[], isBinary));
  }

  readonly #close = (code: number, reason: string): void => {
    const ws = this.#ws;
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
  };

  #onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    const decoded = this.#codec.decode(data, isBinary);
    if (!decoded.ok) {
      const { reason, message, close: closeWith } = decoded.rejection;
      this.#reject(reason, message);
      if (closeWith) this.#close(closeWith.code, closeWith.reason);
      return;
    }
    const event = decoded.event;
    const call = this.#call;
    switch (event?.type) {
      case undefined:
        return;
      case "start":
        if (this.#streamId !== undefined) return this.#reject("duplicate_start", "start after start");
        void this.#start(event);
        return;
      case "media":
        if (!call) return this.#reject("before_start", "media before start");
        call.onMedia(event.audio);
        return;
      case "played":
        call?.onMark(event.name);
        return;
      case "dtmf":
        call?.onDtmf(event.digit);
        return;
      case "stop":
        this.#stopped = true;
        void call?.close("completed");
        this.#close(CLOSE.normal, "stopped");
        return;
    }
  }

  #reject(reason: string, message: string): void {
    const o = this.#o;
    const n = o.stats.rejectFrame(reason);
    // Logged with its reason, rate-limited per reason per window so a flood cannot flood the log.
    const decision = o.rejectLog?.take(reason) ?? { log: true, suppressed: 0 };
    if (decision.log)
      o.logger.warn(
        {
          carrier: o.carrier.id,
          ip: this.#ip,
          streamId: this.#streamId,
          reason,
          count: n,
          ...(decision.suppressed > 0 ? { suppressed: decision.suppressed } : {}),
        },
        `media stream frame rejected: ${message}`,
      );
  }

  /** The start handshake: u-law 8 kHz mono only, a valid token, then the call connects to this socket. */
  async #start(msg: Extract<CarrierStreamEvent, { type: "start" }>): Promise<void> {
    const o = this.#o;
    const carrier = o.carrier.id;
    clearTimeout(this.#preStart);
    this.#streamId = msg.streamId;
    const callSid = msg.callId;
    // The call plays and hears u-law 8 kHz mono (the format every carrier offers for media streams).
    if (!isCallFormat(msg.format)) {
      this.#close(
        CLOSE.policy,
        `media format must be u-law 8000 Hz mono, not ${msg.formatName}`.slice(0, 120),
      );
      return;
    }
    const found = callOfStream(o, msg.parameters["token"], callSid);
    if (!found.ok) {
      o.stats.refuseSocket(`token ${found.why}`);
      o.logger.warn(
        { carrier, ip: this.#ip, callId: callSid, reason: found.why },
        "media stream: token refused",
      );
      this.#close(CLOSE.policy, `stream token ${found.why}`);
      return;
    }
    const target = found.call;
    this.#admission.started();
    this.#call = target;
    o.stats.callsStarted++;
    try {
      await target.connect(this.#lineTo(target), this.#close, msg.streamId);
    } catch (err) {
      o.logger.error({ carrier, err, callId: callSid }, "media stream: the call's session could not start");
      await target.close("error", CLOSE.tryAgainLater);
    }
  }

  /** The playout's line over this socket; a carrier without playback acknowledgements reaches marks by the clock. */
  #lineTo(target: CallSession): PlayoutLine {
    const acks =
      this.#o.carrier.acknowledgements === "none"
        ? new ClockAcknowledger({ played: (name) => target.onMark(name) })
        : undefined;
    if (acks) this.#ws.once("close", () => acks.close());
    return socketLine(this.#ws, this.#codec, acks);
  }
}

function isCallFormat(f: Extract<CarrierStreamEvent, { type: "start" }>["format"]): boolean {
  return f !== undefined && sameAudioFormat(f, ULAW_8K);
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
