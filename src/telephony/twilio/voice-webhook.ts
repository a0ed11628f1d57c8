/**
 * POST /telephony/twilio/voice: Twilio's voice webhook. A request whose
 * X-Twilio-Signature does not verify gets 403; a valid one gets TwiML that
 * connects the call to our bidirectional stream WebSocket, with a one-time
 * token and the call's metadata as <Parameter>s. Twilio hands the parameters
 * back in the stream's `start.customParameters`, which is how the stream is
 * tied to this validated request.
 */
import formbody from "@fastify/formbody";
import type { FastifyPluginAsync } from "fastify";
// Deep import for the same reason as the webhooks module (see twilio-signature.ts):
// the TwiML builder alone costs ~30 ms to load, the package root ~140 ms.
import VoiceResponse from "twilio/lib/twiml/VoiceResponse.js";
import { TalkError } from "../../core/errors.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/logger.js";
import type { StreamCallMetadata, StreamTokenStore } from "./stream-token-store.js";
import {
  isValidTwilioSignature,
  parsePublicUrl,
  signedWebhookUrl,
  streamUrlFor,
  type TwilioFormParams,
} from "./twilio-signature.js";

export const TWILIO_VOICE_PATH = "/telephony/twilio/voice";
export const TWILIO_STREAM_PATH = "/telephony/twilio/stream";

/** Names of the <Parameter>s we put on the <Stream>; the stream adapter reads them back. */
export const STREAM_PARAMETER = Object.freeze({
  token: "token",
  callSid: "callSid",
  accountSid: "accountSid",
  from: "from",
  to: "to",
  direction: "direction",
});

/** Options of the Twilio voice webhook plugin. */
export interface TwilioVoiceWebhookOptions {
  /** The account's auth token (TWILIO_AUTH_TOKEN), the HMAC key of X-Twilio-Signature. Required unless unsignedLoopback. */
  authToken: string;
  /** The base URL Twilio reaches (PUBLIC_URL): http(s), no query. Required unless unsignedLoopback. */
  publicUrl: string | undefined;
  /**
   * Local demo mode, for a server with no auth token on a loopback address:
   * unsigned webhooks are accepted from loopback peers only, and without a
   * publicUrl the stream URL is built from the request's Host. Default false.
   */
  unsignedLoopback?: boolean;
  /** Where tokens are issued; the stream route consumes them from the same store. Required. */
  tokens: StreamTokenStore;
  /** Route path of the webhook. Default "/telephony/twilio/voice". */
  path?: string;
  /** Path of the stream WebSocket under publicUrl. Default "/telephony/twilio/stream". */
  streamPath?: string;
  /** Largest webhook body accepted, bytes (Twilio's are ~1 KB). Default 65 536. */
  bodyLimit?: number;
  logger?: TalkLogger;
}

interface ResolvedOptions {
  authToken: string;
  publicUrl: string | undefined;
  tokens: StreamTokenStore;
  path: string;
  streamPath: string;
  streamUrl: string | undefined;
  unsignedLoopback: boolean;
  bodyLimit: number;
  logger: TalkLogger;
}

function resolveOptions(options: TwilioVoiceWebhookOptions): ResolvedOptions {
  const unsignedLoopback = options.unsignedLoopback === true;
  if (unsignedLoopback && options.authToken) {
    throw new TalkError(
      "config_invalid",
      "unsignedLoopback is only for servers without a Twilio auth token.",
    );
  }
  if (!unsignedLoopback && (typeof options.authToken !== "string" || options.authToken.length === 0)) {
    throw new TalkError(
      "config_invalid",
      "twilioVoiceWebhook needs the Twilio auth token (TWILIO_AUTH_TOKEN).",
    );
  }
  if (options.tokens === undefined || options.tokens === null) {
    throw new TalkError("config_invalid", "twilioVoiceWebhook needs a StreamTokenStore.");
  }
  const path = options.path ?? TWILIO_VOICE_PATH;
  const streamPath = options.streamPath ?? TWILIO_STREAM_PATH;
  for (const [name, value] of [
    ["path", path],
    ["streamPath", streamPath],
  ] as const) {
    if (!value.startsWith("/"))
      throw new TalkError("config_invalid", `${name} must start with "/", got "${value}"`);
  }
  const bodyLimit = options.bodyLimit ?? 65_536;
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1024) {
    throw new TalkError("config_invalid", `bodyLimit must be an integer >= 1024, got ${String(bodyLimit)}`);
  }
  if (!unsignedLoopback && options.publicUrl === undefined) {
    throw new TalkError("config_invalid", "twilioVoiceWebhook needs the public URL (PUBLIC_URL).");
  }
  const publicUrl = options.publicUrl === undefined ? undefined : parsePublicUrl(options.publicUrl);
  return {
    authToken: options.authToken,
    publicUrl,
    tokens: options.tokens,
    path,
    streamPath,
    streamUrl: publicUrl === undefined ? undefined : streamUrlFor(publicUrl, streamPath),
    unsignedLoopback,
    bodyLimit,
    logger: options.logger ?? NOOP_LOGGER,
  };
}

function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** TwiML connecting the call to `streamUrl`, with the token and metadata as parameters. */
export function connectStreamTwiml(streamUrl: string, token: string, call: StreamCallMetadata): string {
  const response = new VoiceResponse();
  const stream = response.connect().stream({ url: streamUrl });
  const parameters: Array<[string, string | undefined]> = [
    [STREAM_PARAMETER.token, token],
    [STREAM_PARAMETER.callSid, call.callSid],
    [STREAM_PARAMETER.accountSid, call.accountSid],
    [STREAM_PARAMETER.from, call.from],
    [STREAM_PARAMETER.to, call.to],
    [STREAM_PARAMETER.direction, call.direction],
  ];
  for (const [name, value] of parameters) {
    if (value !== undefined) stream.parameter({ name, value });
  }
  return response.toString();
}

/**
 * The voice webhook as an encapsulated Fastify plugin: the form-body parser
 * it registers applies to its own route only. Options are validated here, at
 * construction, not on the first call.
 */
export function twilioVoiceWebhook(options: TwilioVoiceWebhookOptions): FastifyPluginAsync {
  const resolved = resolveOptions(options);
  return async (app) => {
    await app.register(formbody, { bodyLimit: resolved.bodyLimit });
    app.post(resolved.path, { bodyLimit: resolved.bodyLimit }, async (request, reply) => {
      const params = (request.body ?? {}) as TwilioFormParams;
      const header = request.headers["x-twilio-signature"];
      const signature = typeof header === "string" ? header : undefined;
      const publicUrl = resolved.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const url = signedWebhookUrl(publicUrl, request.url);
      const accepted = resolved.unsignedLoopback
        ? isLoopbackAddress(request.socket.remoteAddress)
        : isValidTwilioSignature(resolved.authToken, signature, url, params);
      if (typeof params !== "object" || !accepted) {
        // Never say why: a forger learns nothing from the answer.
        resolved.logger.warn(
          { url, hasSignature: signature !== undefined },
          "twilio webhook: signature rejected",
        );
        return reply.code(403).type("text/plain").send("Forbidden");
      }
      const callSid = single(params.CallSid);
      if (callSid === undefined) {
        return reply.code(400).type("text/plain").send("Missing CallSid");
      }
      // The number's webhook URL may pin the mode (`.../voice?mode=stt-tts`); Twilio signs the query too.
      const mode = (request.query as Record<string, unknown> | undefined)?.["mode"];
      if (mode !== undefined && mode !== "realtime" && mode !== "stt-tts") {
        return reply.code(400).type("text/plain").send("mode must be realtime or stt-tts");
      }
      const call: StreamCallMetadata = {
        callSid,
        accountSid: single(params.AccountSid),
        from: single(params.From),
        to: single(params.To),
        direction: single(params.Direction),
        ...(mode !== undefined ? { mode } : {}),
      };
      const token = resolved.tokens.issue(call);
      resolved.logger.info(
        { callSid, direction: call.direction },
        "twilio webhook: connecting call to stream",
      );
      return reply
        .code(200)
        .type("text/xml")
        .send(
          connectStreamTwiml(resolved.streamUrl ?? streamUrlFor(publicUrl, resolved.streamPath), token, call),
        );
    });
  };
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4 === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
