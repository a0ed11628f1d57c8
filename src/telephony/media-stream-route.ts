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
import type { FastifyPluginAsync } from "fastify";
import type { WebSocket } from "ws";
import type { TalkLogger } from "../core/index.js";
import { LimitedLog, sameAudioFormat } from "../core/index.js";
import type { CarrierProtocol, CarrierStreamCodec, CarrierStreamEvent } from "./carrier/carrier-protocol.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallCarrier, CallIdentity, CallSession } from "./call-session.js";
import type { PlayoutLine } from "./playout/call-playout.js";
import { ClockAcknowledger } from "./playout/clock-acknowledger.js";
import { signedWebhookUrl } from "./public-url.js";
import { socketLine } from "./socket-line.js";
import { resumeKeyOf, type StreamClaims, type StreamTokens } from "./stream-tokens.js";
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
  /** The base URL the carrier reaches (what it signs); undefined in local demo mode (the request's Host then). */
  publicUrl: string | undefined;
  /** The carrier as its calls see it (id, REST client, line format). */
  callCarrier: CallCarrier;
  calls: CallRegistry;
  /** Stream tokens (any worker's), checked against the start's call id and spent once cluster-wide. */
  tokens: StreamTokens;
  /** Outbound calls dialled here: whether a dial is ours, and its call once its token is spent. */
  outbound: {
    holds(dialId: string): boolean;
    take(dialId: string, callId: string): CallSession | undefined;
  };
  /** Creates the call of a validated inbound stream (session created, not connected yet); `mode` from the webhook URL. */
  createCall(carrier: CallCarrier, identity: CallIdentity, mode: string | undefined): CallSession;
  preStartTimeoutMs: number;
  maxPayloadBytes: number;
  reconnectGraceMs: number;
  stats: TelephonyStats;
  logger: TalkLogger;
  /** True while the worker drains: new streams are refused with 1013. Default never. */
  draining?: () => boolean;
  /**
   * The rate-limited warnings of refusals (sockets refused, tokens refused, frames rejected: 10 lines per
   * reason a minute, then a count), shared by the surface's routes. Default: one of this route's own.
   */
  refusals?: LimitedLog;
}

export function mediaStreamRoute(options: MediaStreamRouteOptions): FastifyPluginAsync {
  const o = { ...options, refusals: options.refusals ?? new LimitedLog(options.logger) };
  return async (app) => {
    app.get(o.carrier.paths.stream, { websocket: true }, (socket, request) => {
      const base = o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const codec = o.carrier.openStream({
        maxBytes: o.maxPayloadBytes,
        request: { url: request.url, headers: request.headers },
        signedUrl: signedWebhookUrl(base, request.url),
      });
      handleStream(o, codec, socket, request.socket.remoteAddress ?? "unknown");
    });
  };
}

function handleStream(
  o: MediaStreamRouteOptions & { refusals: LimitedLog },
  codec: CarrierStreamCodec,
  ws: WebSocket,
  ip: string,
): void {
  const admitted = o.draining?.() === true ? { ok: false as const, reason: "draining" } : o.calls.admit(ip);
  if (!admitted.ok) {
    o.stats.refuseSocket(admitted.reason);
    o.refusals.warn(
      `${o.carrier.id}:stream:${admitted.reason}`,
      { carrier: o.carrier.id, ip, reason: admitted.reason },
      "media stream refused",
    );
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
  readonly #o: MediaStreamRouteOptions & { refusals: LimitedLog };
  readonly #codec: CarrierStreamCodec;
  readonly #ws: WebSocket;
  readonly #ip: string;
  readonly #admission: { release(): void; started(): void };
  readonly #preStart: NodeJS.Timeout;
  #streamId: string | undefined;
  #call: CallSession | undefined;
  /** Caller audio that arrived while the start was being checked (token, session): handed over once connected. */
  #early: Uint8Array[] | undefined;
  #stopped = false;
  /** A frame broke the protocol: the call ends with the socket, no reconnect grace. */
  #fatal = false;

  constructor(
    o: MediaStreamRouteOptions & { refusals: LimitedLog },
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
    ws.on("close", (code: number) => {
      clearTimeout(this.#preStart);
      admission.release();
      if (!this.#call || this.#stopped) return;
      if (this.#fatal) return void this.#call.close("protocol_error");
      // A carrier that ends streams by closing them (no stop frame, never reopened) says what the close means.
      const ended = codec.ended?.(code);
      if (ended !== undefined) void this.#call.close(ended);
      else this.#call.detach(o.reconnectGraceMs);
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
      if (closeWith) {
        this.#fatal = true;
        this.#close(closeWith.code, closeWith.reason);
      }
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
        if (call) return call.onMedia(event.audio, event.base64);
        if (this.#early && this.#early.length < MAX_EARLY_FRAMES) return void this.#early.push(event.audio);
        if (!this.#early) this.#reject("before_start", "media before start");
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
    o.refusals.warn(
      `${o.carrier.id}:frame:${reason}`,
      { carrier: o.carrier.id, ip: this.#ip, streamId: this.#streamId, reason, count: n },
      `media stream frame rejected: ${message}`,
    );
  }

  /** The start handshake: the carrier's line format, a valid token, then the call connects to this socket. */
  async #start(msg: Extract<CarrierStreamEvent, { type: "start" }>): Promise<void> {
    const o = this.#o;
    const carrier = o.carrier.id;
    clearTimeout(this.#preStart);
    this.#streamId = msg.streamId;
    const callSid = msg.callId;
    // The call plays and hears the carrier's line format (u-law 8 kHz for most; Vonage's L16 16 kHz).
    if (msg.format === undefined || !sameAudioFormat(msg.format, o.carrier.lineFormat)) {
      const want = o.callCarrier.line.format;
      this.#close(
        CLOSE.policy,
        `media format must be ${want.encoding} ${want.sampleRate} Hz mono, not ${msg.formatName}`.slice(
          0,
          120,
        ),
      );
      return;
    }
    this.#early = [];
    const found = await callOfStream(o, msg.parameters["token"], callSid);
    if (this.#ws.readyState !== this.#ws.OPEN) {
      // The carrier gave up while the token was checked: a call created for it ends here.
      if (found.ok && found.call.state === "created") void found.call.close("connection_lost");
      return;
    }
    if (!found.ok) {
      o.stats.refuseSocket(`token ${found.why}`);
      // Anyone can open sockets with forged tokens: limited like the frame faults, not one line each.
      o.refusals.warn(
        `${carrier}:token:${found.why}`,
        { carrier, ip: this.#ip, callId: callSid, reason: found.why },
        "media stream: token refused",
      );
      this.#close(CLOSE.policy, `stream token ${found.why}`);
      return;
    }
    const target = found.call;
    if (target.state === "created")
      o.logger.info({ carrier, callId: callSid, streamId: msg.streamId }, "media stream: call started");
    this.#admission.started();
    this.#call = target;
    o.stats.callsStarted++;
    try {
      await target.connect(this.#lineTo(target), this.#close, msg.streamId);
      const early = this.#early ?? [];
      this.#early = undefined;
      for (const audio of early) target.onMedia(audio);
    } catch (err) {
      o.logger.error({ carrier, err, callId: callSid }, "media stream: the call's session could not start");
      await target.close("error", CLOSE.tryAgainLater);
    }
  }

  /** The playout's line over this socket; a carrier without playback acknowledgements reaches marks by the clock. */
  #lineTo(target: CallSession): PlayoutLine {
    const acks =
      this.#o.carrier.acknowledgements === "none"
        ? new ClockAcknowledger({
            bytesPerMs: this.#o.callCarrier.line.bytesPerMs,
            played: (name) => target.onMark(name),
          })
        : undefined;
    if (acks) this.#ws.once("close", () => acks.close());
    return socketLine(this.#ws, this.#codec, acks);
  }
}

/** Caller audio held while a start is checked (~1 s of 20 ms frames); more is dropped. */
const MAX_EARLY_FRAMES = 50;

type StreamCall = { ok: true; call: CallSession } | { ok: false; why: string };

/**
 * The call a stream's token opens: a detached call of this worker resuming
 * within its grace (the same token, hashed, as when it started), an outbound
 * call dialled here, or a new inbound call (a token of any worker's voice
 * webhook). A token is spent once cluster-wide; a reconnect that reaches
 * another worker than the call's finds it spent and is refused (`reused`):
 * the call on its worker ends when its grace runs out (docs/telephony.md).
 */
async function callOfStream(
  o: MediaStreamRouteOptions,
  token: string | undefined,
  callId: string,
): Promise<StreamCall> {
  const resumeKey = token ? resumeKeyOf(token) : undefined;
  const resumed = resumeKey ? o.calls.resumable(callId, resumeKey) : undefined;
  if (resumed) return { ok: true, call: resumed };
  const expect = { carrier: o.carrier.id, callId };
  const verified = await o.tokens.verify(token, expect);
  if (!verified.ok) return { ok: false, why: verified.reason };
  // A stream of a call dialled on another worker cannot be served here: refused before its token is spent.
  if (verified.claims.kind === "outbound" && !o.outbound.holds(verified.claims.callId))
    return { ok: false, why: "elsewhere" };
  const redeemed = await o.tokens.redeem(token, expect);
  if (!redeemed.ok) return { ok: false, why: redeemed.reason };
  const call = callOfClaims(o, redeemed.claims, callId);
  if (!call) return { ok: false, why: "call_mismatch" };
  if (call.state === "created") o.calls.add(call, redeemed.resumeKey);
  return { ok: true, call };
}

function callOfClaims(
  o: MediaStreamRouteOptions,
  claims: StreamClaims,
  callId: string,
): CallSession | undefined {
  if (claims.kind === "outbound") return o.outbound.take(claims.callId, callId);
  return o.createCall(
    o.callCarrier,
    { callSid: claims.callId, from: claims.from, to: claims.to, direction: claims.direction ?? "inbound" },
    claims.mode,
  );
}
