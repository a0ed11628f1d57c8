/**
 * `<carrier paths.voice>` (e.g. POST /telephony/twilio/voice, GET or POST
 * /telephony/vonage/answer: the methods the carrier declares): a carrier's
 * voice webhook. A request the carrier's authentication refuses gets 403 (or
 * the carrier's refusal status); a
 * valid one gets the carrier's answer document connecting the call to our
 * media-stream WebSocket, with a one-time token and the call's metadata as
 * stream parameters. The carrier hands the parameters back in the stream's
 * start, which is how the stream is tied to this validated request.
 *
 * A carrier that fetches a dialled call's answer document instead of taking
 * it inline (Plivo's `answer_url`) requests this same webhook with the dial's
 * stream token in the query (`?token=`, CarrierDialRequest.answerUrl): the
 * answer then carries that token (verified here, spent by the stream) and the
 * carrier's id of the call, instead of a new inbound token.
 */
import type { FastifyPluginAsync, RouteHandlerMethod } from "fastify";
import { TalkError } from "../core/index.js";
import { LimitedLog, NOOP_LOGGER, type TalkLogger } from "../core/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { webhookBodyParsers, webhookRequest } from "./carrier/webhook-request.js";
import { isLoopbackAddress, parsePublicUrl, streamUrlFor } from "./public-url.js";
import type { StreamCallMetadata, StreamTokens } from "./stream-tokens.js";

/** Names of the parameters we put on the stream; the stream route reads the token back. */
export const STREAM_PARAMETER = Object.freeze({
  token: "token",
  callId: "callId",
  accountId: "accountId",
  from: "from",
  to: "to",
  direction: "direction",
});

/** Options of the answer webhook plugin. */
export interface AnswerWebhookOptions {
  carrier: CarrierProtocol;
  /** The base URL the carrier reaches (PUBLIC_URL): http(s), no query. Required unless unsignedLoopback. */
  publicUrl: string | undefined;
  /**
   * Local demo mode, for a server without carrier credentials on a loopback
   * address: unsigned webhooks are accepted from loopback peers only, and
   * without a publicUrl the stream URL is built from the request's Host.
   * Default false.
   */
  unsignedLoopback?: boolean;
  /** Where stream tokens are issued (any worker's stream route verifies and spends them). Required. */
  tokens: StreamTokens;
  /** How long a stream token stays valid, ms: the carrier opens the stream right after the answer. Default 30 000. */
  tokenTtlMs?: number;
  /** Largest webhook body accepted, bytes (carriers' are ~1 KB). Default 65 536. */
  bodyLimit?: number;
  /** True while the worker drains: the webhook answers 503 (the carrier tries its fallback URL). Default never. */
  draining?: () => boolean;
  logger?: TalkLogger;
  /** The rate-limited warnings of refusals, shared by the surface's routes. Default: one of this route's own. */
  refusals?: LimitedLog;
}

/** The stream parameters of a call: the token first, then what is known of the call. */
export function streamParameters(token: string, call: StreamCallMetadata): Record<string, string> {
  const parameters: Record<string, string> = { [STREAM_PARAMETER.token]: token };
  const fields: Array<[string, string | undefined]> = [
    [STREAM_PARAMETER.callId, call.callId],
    [STREAM_PARAMETER.accountId, call.accountId],
    [STREAM_PARAMETER.from, call.from],
    [STREAM_PARAMETER.to, call.to],
    [STREAM_PARAMETER.direction, call.direction],
  ];
  for (const [name, value] of fields) if (value !== undefined) parameters[name] = value;
  return parameters;
}

/**
 * The voice webhook as an encapsulated Fastify plugin: the body parsers it
 * registers apply to its own route only. Options are validated here, at
 * construction, not on the first call.
 */
export function answerWebhook(options: AnswerWebhookOptions): FastifyPluginAsync {
  const { carrier, tokens } = options;
  const unsignedLoopback = options.unsignedLoopback === true;
  if (unsignedLoopback && carrier.signed)
    throw new TalkError(
      "config_invalid",
      `unsignedLoopback is only for servers without ${carrier.name} credentials.`,
    );
  if (!unsignedLoopback && !carrier.signed)
    throw new TalkError(
      "config_invalid",
      `The ${carrier.name} voice webhook needs its credentials to check signatures.`,
    );
  if (!tokens) throw new TalkError("config_invalid", "The voice webhook needs its StreamTokens.");
  const tokenTtlMs = options.tokenTtlMs ?? 30_000;
  const bodyLimit = options.bodyLimit ?? 65_536;
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1024)
    throw new TalkError("config_invalid", `bodyLimit must be an integer >= 1024, got ${String(bodyLimit)}`);
  if (!unsignedLoopback && options.publicUrl === undefined)
    throw new TalkError("config_invalid", "The voice webhook needs the public URL (PUBLIC_URL).");
  const publicUrl = options.publicUrl === undefined ? undefined : parsePublicUrl(options.publicUrl);
  const streamUrl = publicUrl === undefined ? undefined : streamUrlFor(publicUrl, carrier.paths.stream);
  const logger = options.logger ?? NOOP_LOGGER;
  const refusals = options.refusals ?? new LimitedLog(logger);

  return async (app) => {
    webhookBodyParsers(app, bodyLimit);
    const refusal = carrier.refusalStatus ?? 403;
    // The methods the carrier's webhook uses (Vonage: GET, or POST JSON).
    const voiceRoute = (url: string, options: { bodyLimit: number }, handler: RouteHandlerMethod): void => {
      app.route({ method: [...(carrier.voiceMethods ?? ["POST"])], url, ...options, handler });
    };
    voiceRoute(carrier.paths.voice, { bodyLimit }, async (request, reply) => {
      const base = publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const webhook = webhookRequest(request, base);
      const accepted = unsignedLoopback
        ? isLoopbackAddress(request.socket.remoteAddress)
        : carrier.authenticate(webhook) === "ok";
      if (!accepted) {
        // Never say why: a forger learns nothing from the answer. Nor can a flood of them flood the log.
        refusals.warn(
          `${carrier.id}:voice:signature`,
          { carrier: carrier.id, url: webhook.url },
          "voice webhook: signature rejected",
        );
        return reply
          .code(refusal)
          .type("text/plain")
          .send(refusal === 401 ? "Unauthorized" : "Forbidden");
      }
      const inbound = carrier.inboundCall(webhook);
      if (inbound === undefined) return reply.code(400).type("text/plain").send("Missing call id");
      // The number's webhook URL may pin the mode (`.../voice?mode=stt-tts`); carriers sign the query too.
      const mode = (request.query as Record<string, unknown> | undefined)?.["mode"];
      if (mode !== undefined && mode !== "realtime" && mode !== "stt-tts") {
        return reply.code(400).type("text/plain").send("mode must be realtime or stt-tts");
      }
      // A carrier that fetches a dialled call's answer (Plivo answer_url) presents the dial's token in the query.
      const dialToken = (request.query as Record<string, unknown> | undefined)?.[STREAM_PARAMETER.token];
      if (dialToken !== undefined) {
        const parameters = await dialStreamParameters(tokens, carrier, dialToken, inbound.callId, {
          logger,
          refusals,
        });
        if (parameters === undefined) return reply.code(403).type("text/plain").send("Forbidden");
        const document = carrier.answer({
          url: streamUrl ?? streamUrlFor(base, carrier.paths.stream),
          parameters,
        });
        return reply.code(200).type(document.contentType).send(document.body);
      }
      // Draining: no new inbound call (a dialled call's answer above still connects); 503 sends the carrier to its fallback URL.
      if (options.draining?.() === true)
        return reply.code(503).header("retry-after", "5").type("text/plain").send("Draining");
      const call: StreamCallMetadata = {
        callId: inbound.callId,
        accountId: inbound.accountId,
        from: inbound.from,
        to: inbound.to,
        direction: inbound.direction,
        ...(mode !== undefined ? { mode } : {}),
      };
      logger.info(
        { carrier: carrier.id, callId: call.callId, direction: call.direction },
        "voice webhook: connecting call to stream",
      );
      const url = streamUrl ?? streamUrlFor(base, carrier.paths.stream);
      const document = await answerWithinLimit(carrier, url, call, logger, (claims) =>
        tokens.issue({ ...claims, kind: "inbound", carrier: carrier.id }, tokenTtlMs),
      );
      return reply.code(200).type(document.contentType).send(document.body);
    });
  };
}

/**
 * The answer document for an inbound call. Some carriers limit the stream
 * parameters (Plivo's extraHeaders, Vonage's headers: 512 bytes) and refuse
 * parameters over it with payload_too_large: then the caller ids, which make
 * a token long (SIP URIs), are left out of the token, so the call still
 * connects, its session without `from` / `to`; logged.
 */
async function answerWithinLimit(
  carrier: CarrierProtocol,
  url: string,
  call: StreamCallMetadata,
  logger: TalkLogger,
  issue: (claims: StreamCallMetadata) => Promise<string>,
): Promise<ReturnType<CarrierProtocol["answer"]>> {
  try {
    return carrier.answer({ url, parameters: streamParameters(await issue(call), call) });
  } catch (err) {
    if (!(err instanceof TalkError) || err.code !== "payload_too_large") throw err;
    logger.warn(
      { carrier: carrier.id, callId: call.callId, fromChars: call.from?.length, toChars: call.to?.length },
      "voice webhook: caller ids too long for the carrier's stream parameters; left out of the stream token",
    );
    const shorter: StreamCallMetadata = { ...call, from: undefined, to: undefined };
    return carrier.answer({ url, parameters: streamParameters(await issue(shorter), shorter) });
  }
}

/**
 * The stream parameters of a dialled call whose answer the carrier fetched:
 * the dial's own token (verified, not spent: the stream spends it) and the
 * carrier's id of the call; undefined when the token is not a valid dial's.
 */
async function dialStreamParameters(
  tokens: StreamTokens,
  carrier: CarrierProtocol,
  token: unknown,
  callId: string,
  { logger, refusals }: { logger: TalkLogger; refusals: LimitedLog },
): Promise<Record<string, string> | undefined> {
  const verified = await tokens.verify(token, { carrier: carrier.id });
  if (!verified.ok || verified.claims.kind !== "outbound") {
    const reason = verified.ok ? "not_a_dial" : verified.reason;
    refusals.warn(
      `${carrier.id}:voice:dial-token:${reason}`,
      { carrier: carrier.id, callId, reason },
      "voice webhook: dial token refused",
    );
    return undefined;
  }
  logger.info({ carrier: carrier.id, callId }, "voice webhook: connecting dialled call");
  return streamParameters(token as string, { ...verified.claims, callId });
}
