import type { FastifyInstance, FastifyReply } from "fastify";
import { TalkError } from "../core/index.js";

/**
 * The one error -> HTTP answer of every route (gateway, meetings, telephony):
 * a TalkError is sent with its code's status (`TalkError.httpStatus`) as
 * `{ error: { code, message, retryable, details? } }`; anything else is
 * logged on the request's logger and answered 500 `internal` with the
 * catalogue's message, never its own (no internals leak to clients).
 */
export function replyError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof TalkError) {
    if (err.code === "unauthorized") reply.header("www-authenticate", 'Bearer realm="talkgate"');
    return reply.code(err.httpStatus).send({ error: err.toJSON() });
  }
  reply.log.error({ err }, "request failed");
  const internal = new TalkError("internal");
  return reply.code(internal.httpStatus).send({ error: internal.toJSON() });
}

/** What Fastify's own errors carry: its code (FST_ERR_*) and the status it meant. */
interface FastifyErrorLike {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/**
 * A client error Fastify raised before a route's handler ran (an empty or
 * malformed JSON body, a content type no parser takes, a body past the limit,
 * a bad Content-Length) as a TalkError with a stable code; Fastify's own code
 * in `details.reason`. Undefined for anything that is not a 4xx.
 */
export function clientErrorOf(err: unknown): TalkError | undefined {
  if (err instanceof TalkError || typeof err !== "object" || err === null) return undefined;
  const { code, statusCode, message } = err as FastifyErrorLike;
  if (typeof statusCode !== "number" || statusCode < 400 || statusCode > 499) return undefined;
  const text = typeof message === "string" && message.length > 0 ? message : undefined;
  const details = typeof code === "string" ? { details: { reason: code } } : {};
  if (statusCode === 413) return new TalkError("payload_too_large", text, details);
  if (statusCode === 415) return new TalkError("unsupported_media_type", text, details);
  return new TalkError("invalid_request", text, details);
}

/**
 * The error and not-found handlers of the server's Fastify, set before any
 * route or plugin so every route inherits them: Fastify's own client errors
 * and unknown routes answer `{ error: { code, message, retryable } }` like
 * every route's (docs/errors.md), not Fastify's `{ statusCode, error, message }`;
 * anything else goes through replyError (500 `internal`, logged).
 */
export function useTalkErrorReplies(app: FastifyInstance): void {
  app.setErrorHandler((err, _request, reply) => replyError(reply, clientErrorOf(err) ?? err));
  app.setNotFoundHandler((request, reply) =>
    replyError(
      reply,
      new TalkError("route_not_found", `No route ${request.method} ${request.url.split("?")[0] ?? ""}.`),
    ),
  );
}
