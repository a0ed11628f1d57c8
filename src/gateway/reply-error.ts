import type { FastifyReply } from "fastify";
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
