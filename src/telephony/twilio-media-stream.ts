/**
 * GET /telephony/twilio/stream (WebSocket): Twilio's bidirectional Media
 * Stream of one call. Every message Twilio sends is parsed at the boundary;
 * a bad frame is counted and logged and touches nothing else (an oversized
 * one closes this call with 1009). The stream is tied to a validated webhook
 * by the one-time token in `start.customParameters`: none, unknown, expired
 * or reused closes with 1008. Limits: pre-start time (1008), unstarted,
 * total and per-address sockets (1013), frame size (1009), send-buffer
 * high-water (CallPlayout).
 */
import { createHash } from "node:crypto";
import type { FastifyPluginAsync } from "fastify";
import type { WebSocket } from "ws";
import type { TalkLogger } from "../core/logger.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallIdentity, CallSession } from "./call-session.js";
import type { TelephonyStats } from "./telephony-stats.js";
import {
  isMulaw8kMono,
  parseTwilioMessage,
  type TwilioStartMessage,
} from "./twilio/media-stream-messages.js";
import type { StreamTokenStore } from "./twilio/stream-token-store.js";
import { TWILIO_STREAM_PATH } from "./twilio/voice-webhook.js";

export const CLOSE = Object.freeze({
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  tryAgainLater: 1013,
});

export interface MediaStreamRouteOptions {
  path?: string;
  calls: CallRegistry;
  /** Tokens of inbound calls (voice webhook), checked against start.callSid. */
  tokens: StreamTokenStore;
  /** Redeems a token of an outbound call we placed; undefined when it is not one. */
  redeemOutbound(token: string | undefined, callSid: string): CallSession | undefined;
  /** Creates the call of a validated inbound stream (session created, not connected yet); `mode` from the webhook URL. */
  createCall(identity: CallIdentity, mode: string | undefined): CallSession;
  preStartTimeoutMs: number;
  maxPayloadBytes: number;
  reconnectGraceMs: number;
  stats: TelephonyStats;
  logger: TalkLogger;
}

export function twilioMediaStreamRoute(o: MediaStreamRouteOptions): FastifyPluginAsync {
  return async (app) => {
    app.get(o.path ?? TWILIO_STREAM_PATH, { websocket: true }, (socket, request) => {
      handleStream(o, socket, request.socket.remoteAddress ?? "unknown");
    });
  };
}

function handleStream(o: MediaStreamRouteOptions, ws: WebSocket, ip: string): void {
  const admitted = o.calls.admit(ip);
  if (!admitted.ok) {
    o.stats.refuseSocket(admitted.reason);
    o.logger.warn({ ip, reason: admitted.reason }, "twilio stream refused");
    ws.close(CLOSE.tryAgainLater, admitted.reason);
    return;
  }
  const { release, started } = admitted;
  let streamSid: string | undefined;
  let call: CallSession | undefined;
  let stopped = false;
  const close = (code: number, reason: string): void => {
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
  };
  const preStart = setTimeout(() => {
    o.stats.refuseSocket("no start");
    close(CLOSE.policy, "no start message in time");
  }, o.preStartTimeoutMs);

  ws.on("error", (err) => o.logger.debug({ err: err.message, ip }, "twilio stream socket error"));
  ws.on("close", () => {
    clearTimeout(preStart);
    release();
    if (call && !stopped) call.detach(o.reconnectGraceMs);
  });
  ws.on("message", (data, isBinary) => {
    if (isBinary) {
      reject("binary_frame", "binary frames are not part of the protocol");
      return;
    }
    const parsed = parseTwilioMessage(data as Buffer, {
      maxBytes: o.maxPayloadBytes,
      ...(streamSid !== undefined ? { expectedStreamSid: streamSid } : {}),
    });
    if (!parsed.ok) {
      const reason = String(parsed.error.details?.["reason"] ?? parsed.error.code);
      reject(reason, parsed.error.message);
      if (reason === "oversized") close(CLOSE.tooBig, "frame too large");
      return;
    }
    const msg = parsed.message;
    switch (msg.event) {
      case "connected":
        return;
      case "start":
        if (streamSid !== undefined) return reject("duplicate_start", "start after start");
        void start(msg);
        return;
      case "media":
        if (!call) return reject("before_start", "media before start");
        call.onMedia(msg.audio);
        return;
      case "mark":
        call?.onMark(msg.mark.name);
        return;
      case "dtmf":
        call?.onDtmf(msg.dtmf.digit);
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
      o.logger.warn({ ip, streamSid, reason, count: n }, `twilio stream frame rejected: ${message}`);
  }

  async function start(msg: TwilioStartMessage): Promise<void> {
    clearTimeout(preStart);
    streamSid = msg.start.streamSid;
    const { callSid } = msg.start;
    if (!isMulaw8kMono(msg.start.mediaFormat)) {
      close(CLOSE.policy, "media format must be audio/x-mulaw 8000 Hz mono");
      return;
    }
    const token = msg.start.customParameters["token"];
    const resumeKey = token ? createHash("sha256").update(token).digest("base64url") : undefined;
    let target: CallSession | undefined;
    const redeemed = o.tokens.consume(token, callSid);
    if (redeemed.ok) {
      target = o.createCall(
        {
          callSid,
          from: redeemed.call.from,
          to: redeemed.call.to,
          direction: redeemed.call.direction ?? "inbound",
        },
        redeemed.call.mode,
      );
      o.calls.add(target, resumeKey);
    } else {
      target =
        o.redeemOutbound(token, callSid) ?? (resumeKey ? o.calls.resumable(callSid, resumeKey) : undefined);
      if (target && target.state === "created") o.calls.add(target, resumeKey);
    }
    if (!target) {
      const why = !token ? "missing" : redeemed.ok ? "unknown" : redeemed.reason;
      o.stats.refuseSocket(`token ${why}`);
      o.logger.warn({ ip, callSid, reason: why }, "twilio stream: token refused");
      close(CLOSE.policy, `stream token ${why}`);
      return;
    }
    started();
    call = target;
    o.stats.callsStarted++;
    // A burst (media frames + its mark, or clear) is sent within one tick: corking the TCP socket for the
    // tick makes it one writev instead of one per message (the largest cost of the relay when measured).
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    let corked = false;
    const uncork = (): void => {
      corked = false;
      socket?.uncork();
    };
    const line = {
      streamSid: msg.start.streamSid,
      send: (text: string) => {
        if (ws.readyState !== ws.OPEN) return;
        if (socket && !corked) {
          corked = true;
          socket.cork();
          process.nextTick(uncork);
        }
        ws.send(text);
      },
      flush: () => {
        if (corked) uncork(); // the uncork already queued for the tick then finds nothing corked
      },
      get bufferedAmount() {
        return ws.bufferedAmount;
      },
    };
    try {
      await target.connect(line, close, msg.start.streamSid);
    } catch (err) {
      o.logger.error({ err, callSid }, "twilio stream: the call's session could not start");
      await target.close("error", CLOSE.tryAgainLater);
    }
  }
}
