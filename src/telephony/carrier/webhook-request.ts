/**
 * Carrier webhooks as the carrier's authentication sees them: the URL the
 * carrier requested (our public URL + path + query), the headers, the raw
 * body (Ed25519 and JWT body hashes are computed over the bytes received)
 * and the parsed fields. `webhookBodyParsers` registers, in the calling
 * plugin's scope only, form and JSON parsers that keep the raw body.
 */
import { parse as parseQuery } from "node:querystring";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CarrierWebhookRequest } from "./carrier-protocol.js";
import { signedWebhookUrl } from "../public-url.js";

const rawBodies = new WeakMap<FastifyRequest, string>();

/** Form (`application/x-www-form-urlencoded`, repeated names as arrays) and JSON bodies, raw body kept. */
export function webhookBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  // Replaces, in this scope only, whatever form or JSON parser the scope inherited.
  for (const type of ["application/x-www-form-urlencoded", "application/json"])
    if (app.hasContentTypeParser(type)) app.removeContentTypeParser(type);
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit },
    (request, body, done) => {
      rawBodies.set(request, body as string);
      done(null, { ...parseQuery(body as string, "&", "=", { maxKeys: 0 }) });
    },
  );
  const json = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit }, (request, body, done) => {
    rawBodies.set(request, body as string);
    json(request, body as string, done);
  });
}

/**
 * The request as a carrier signed it; `publicUrl` is the base the carrier
 * reached (PUBLIC_URL, or the Host in demo mode). A GET's fields are its
 * query's (Vonage's answer webhook is a GET).
 */
export function webhookRequest(request: FastifyRequest, publicUrl: string): CarrierWebhookRequest {
  const body = request.method === "GET" ? request.query : request.body;
  return {
    method: request.method,
    url: signedWebhookUrl(publicUrl, request.url),
    headers: request.headers,
    rawBody: rawBodies.get(request) ?? "",
    params:
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : {},
  };
}
