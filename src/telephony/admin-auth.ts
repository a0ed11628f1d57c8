/**
 * Who may place calls (`POST /telephony/calls`): a bearer token from
 * auth.tokens with the admin scope. With no tokens configured the server is
 * loopback-only (the gateway refuses other hosts), and loopback peers are
 * admitted, as the Talk API admits them.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { AdminCheck } from "./outbound-calls.js";
import { isLoopbackAddress } from "./twilio/voice-webhook.js";

export interface BearerToken {
  token: string;
  scopes: readonly string[];
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

export function adminCheck(tokens: readonly BearerToken[]): AdminCheck {
  const known = tokens.map((t) => ({ digest: digest(t.token), admin: t.scopes.includes("admin") }));
  return (request: FastifyRequest) => {
    if (known.length === 0) return isLoopbackAddress(request.socket.remoteAddress) ? "ok" : "unauthorized";
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
    if (!m) return "unauthorized";
    const d = digest(m[1]!);
    let match: { admin: boolean } | undefined;
    // Every token is compared, so timing does not tell which one matched.
    for (const k of known) if (timingSafeEqual(d, k.digest) && !match) match = k;
    if (!match) return "unauthorized";
    return match.admin ? "ok" : "forbidden";
  };
}
