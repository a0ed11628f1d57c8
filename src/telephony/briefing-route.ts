/**
 * GET/POST `<paths.briefing>?text=...`: what the person who picks up a
 * transferred call hears before the caller is connected (Twilio fetches it
 * as the `<Number url>` whisper). Authenticated like the carrier's other
 * webhooks (the carrier signs the URL, query included, so the text cannot be
 * swapped); the text is at most 500 characters and only ever spoken.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { TalkLogger } from "../core/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { webhookBodyParsers, webhookRequest } from "./carrier/webhook-request.js";
import { isLoopbackAddress } from "./public-url.js";

export interface BriefingRouteOptions {
  carrier: CarrierProtocol;
  publicUrl: string | undefined;
  logger: TalkLogger;
}

export const MAX_BRIEFING_CHARS = 500;

/** The URL of a briefing on `base` for `carrier`, or undefined when the carrier has none. */
export function briefingUrl(carrier: CarrierProtocol, base: string, text: string): string | undefined {
  const path = carrier.paths.briefing;
  if (!path || !carrier.briefing) return undefined;
  return `${base}${path}?text=${encodeURIComponent(text.slice(0, MAX_BRIEFING_CHARS))}`;
}

export function briefingRoute(o: BriefingRouteOptions): FastifyPluginAsync {
  const { carrier, logger } = o;
  return async (app) => {
    const path = carrier.paths.briefing;
    const document = carrier.briefing?.bind(carrier);
    if (!path || !document) return;
    webhookBodyParsers(app, 65_536);
    const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const base = o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const webhook = webhookRequest(request, base);
      const ok = carrier.signed
        ? carrier.authenticate(webhook) === "ok"
        : isLoopbackAddress(request.socket.remoteAddress);
      if (!ok) {
        logger.warn({ carrier: carrier.id }, "briefing: signature rejected");
        return reply.code(403).type("text/plain").send("Forbidden");
      }
      const text = (request.query as Record<string, unknown> | undefined)?.["text"];
      if (typeof text !== "string" || text.trim() === "" || text.length > MAX_BRIEFING_CHARS)
        return reply.code(400).type("text/plain").send(`text: 1-${MAX_BRIEFING_CHARS} characters`);
      const doc = document(text);
      return reply.code(200).type(doc.contentType).send(doc.body);
    };
    app.post(path, handler);
    app.get(path, handler);
  };
}
