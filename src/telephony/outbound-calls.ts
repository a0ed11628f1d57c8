/**
 * Outbound calls: `POST /telephony/calls {to, from?, mode?, greeting?}`
 * (admin token) places a call through the Twilio REST API with inline TwiML
 * that connects its stream, and `POST /telephony/twilio/status` receives the
 * call's status callbacks (signature-checked like the voice webhook). The
 * call's session exists from the dial on, so a call that is never answered
 * still ends in one `session.closed` carrying the carrier's reason (busy,
 * no-answer, failed, canceled, completed).
 */
import formbody from "@fastify/formbody";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { z } from "zod";
import { TalkError, toTalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import { CALL_MODES, type CallMode } from "../config/telephony-schema.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallIdentity, CallSession } from "./call-session.js";
import { StreamTokenStore } from "./twilio/stream-token-store.js";
import { isValidTwilioSignature, signedWebhookUrl, type TwilioFormParams } from "./twilio/twilio-signature.js";
import type { TwilioRestClient } from "./twilio/twilio-rest-client.js";
import { connectStreamTwiml, isLoopbackAddress } from "./twilio/voice-webhook.js";

export const OUTBOUND_CALLS_PATH = "/telephony/calls";
export const TWILIO_STATUS_PATH = "/telephony/twilio/status";
const TERMINAL_STATUSES = new Set(["busy", "no-answer", "failed", "canceled", "completed"]);

const CallRequestSchema = z
  .object({
    to: z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 number (+15551234567)"),
    from: z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 number").optional(),
    mode: z.enum(CALL_MODES).optional(),
    greeting: z.string().max(1000).optional(),
  })
  .strict();

export type AdminCheck = (request: FastifyRequest) => "ok" | "unauthorized" | "forbidden";

export interface OutboundCallsOptions {
  calls: CallRegistry;
  /** Undefined when Twilio credentials are missing: the route answers 503. */
  rest: TwilioRestClient | undefined;
  /** Base URL Twilio reaches (stream and status callback URLs); undefined in unsigned loopback mode. */
  publicUrl: string | undefined;
  /** Empty in unsigned loopback mode (then only loopback peers may post status callbacks). */
  authToken: string;
  defaultFrom: string | undefined;
  streamPath: string;
  maxPending: number;
  authorize: AdminCheck;
  createCall(identity: CallIdentity, overrides: { mode?: CallMode; greeting?: string }): CallSession;
  streamUrl(request: FastifyRequest): string;
  logger: TalkLogger;
}

interface PendingDial {
  callSid: string | undefined;
  call: CallSession | undefined;
}

/** What the stream route needs to accept the stream of a call we placed. */
export interface OutboundRedeemer {
  redeem(token: string | undefined, callSid: string): CallSession | undefined;
}

export function outboundCalls(o: OutboundCallsOptions): { plugin: FastifyPluginAsync; redeemer: OutboundRedeemer } {
  // Long TTL: the token must outlive the ringing (Twilio's default timeout is 60 s).
  const tokens = new StreamTokenStore({ ttlMs: 120_000, maxTokens: o.maxPending * 2 });
  const dials = new Map<string, PendingDial>();

  const redeemer: OutboundRedeemer = {
    redeem(token, callSid) {
      if (!token) return undefined;
      const r = tokens.consume(token);
      if (!r.ok) return undefined;
      const dial = dials.get(r.call.callSid);
      dials.delete(r.call.callSid);
      return dial?.callSid === callSid ? dial.call : undefined;
    },
  };

  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(formbody, { bodyLimit: 65_536 });

    app.post(OUTBOUND_CALLS_PATH, { bodyLimit: 16_384 }, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") {
        const code = auth === "unauthorized" ? 401 : 403;
        return reply.code(code).send({ error: new TalkError(auth, auth === "forbidden" ? "Placing calls needs the admin scope." : undefined).toJSON() });
      }
      if (!o.rest) {
        const err = new TalkError("provider_unavailable", "Twilio is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL.");
        return reply.code(503).send({ error: err.toJSON() });
      }
      const parsed = CallRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const err = new TalkError("invalid_params", `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
        return reply.code(400).send({ error: err.toJSON() });
      }
      const body = parsed.data;
      const from = body.from ?? o.defaultFrom;
      if (!from) {
        return reply.code(400).send({ error: new TalkError("invalid_params", "from: no caller id given and telephony.twilio.defaultFrom is unset.").toJSON() });
      }
      if (dials.size >= o.maxPending) {
        return reply.code(429).send({ error: new TalkError("rate_limited", "Too many outbound calls are being placed.").toJSON() });
      }
      const dialId = `dial-${crypto.randomUUID()}`;
      const token = tokens.issue({ callSid: dialId, to: body.to, from, direction: "outbound-api" });
      const dial: PendingDial = { callSid: undefined, call: undefined };
      dials.set(dialId, dial);
      const twiml = connectStreamTwiml(o.streamUrl(request), token, { callSid: dialId, to: body.to, from, direction: "outbound-api" });
      try {
        const created = await o.rest.createCall({
          to: body.to,
          from,
          twiml,
          statusCallback: `${o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`}${TWILIO_STATUS_PATH}`,
          signal: AbortSignal.timeout(15_000),
        });
        const call = o.createCall(
          { callSid: created.sid, to: body.to, from, direction: "outbound-api" },
          { ...(body.mode ? { mode: body.mode } : {}), ...(body.greeting !== undefined ? { greeting: body.greeting } : {}) },
        );
        dial.callSid = created.sid;
        dial.call = call;
        o.calls.add(call);
        o.logger.info({ callSid: created.sid, sessionId: call.session.id }, "outbound call placed");
        return reply.code(201).send({ callSid: created.sid, sessionId: call.session.id, status: created.status });
      } catch (err) {
        dials.delete(dialId);
        const error = toTalkError(err, "provider_error");
        o.logger.warn({ code: error.code, message: error.message }, "outbound call failed");
        return reply.code(502).send({ error: error.toJSON() });
      }
    });

    app.post(TWILIO_STATUS_PATH, async (request, reply) => {
      const params = (request.body ?? {}) as TwilioFormParams;
      const header = request.headers["x-twilio-signature"];
      const publicUrl = o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const ok = o.authToken
        ? isValidTwilioSignature(o.authToken, typeof header === "string" ? header : undefined, signedWebhookUrl(publicUrl, request.url), params)
        : isLoopbackAddress(request.socket.remoteAddress);
      if (!ok) {
        o.logger.warn({}, "twilio status callback: signature rejected");
        return reply.code(403).type("text/plain").send("Forbidden");
      }
      const callSid = typeof params["CallSid"] === "string" ? params["CallSid"] : undefined;
      const status = typeof params["CallStatus"] === "string" ? params["CallStatus"] : undefined;
      if (callSid && status && TERMINAL_STATUSES.has(status)) {
        const call = o.calls.get(callSid);
        if (call) {
          o.logger.info({ callSid, status }, "call ended by the carrier");
          void call.close(status);
        }
        for (const [id, dial] of dials) if (dial.callSid === callSid) dials.delete(id);
      }
      return reply.code(204).send();
    });
  };
  return { plugin, redeemer };
}
