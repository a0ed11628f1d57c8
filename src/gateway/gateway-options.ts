import { isIP } from "node:net";
import { TalkError } from "../core/index.js";

/**
 * Scope groups a bearer token can hold. `admin` implies `direct-tools`,
 * `direct-tools` implies `write` (it is write plus the privilege of
 * direct-tools sessions: creating them and calling tools in them), `write`
 * implies `read`.
 */
export const GATEWAY_SCOPES = ["read", "write", "direct-tools", "admin"] as const;
export type GatewayScope = (typeof GATEWAY_SCOPES)[number];

export interface GatewayToken {
  /** Who the token belongs to, for logs and metrics. */
  name: string;
  /** The bearer token presented as `Authorization: Bearer <token>`. */
  token: string;
  scopes: GatewayScope[];
}

export interface GatewayRateLimit {
  /** Sustained requests per second per connection (the bucket's refill rate). Default 200. */
  requestsPerSecond: number;
  /** Bucket size: requests a connection may send at once above the sustained rate. Default 400. */
  burst: number;
}

/** Options of the public Talk API server. Every field has a default; see GATEWAY_DEFAULTS. */
export interface GatewayOptions {
  /** Interface to bind. Default 127.0.0.1. A non-loopback host requires auth tokens. */
  host: string;
  /** TCP port; 0 picks a free one. Default 8787. */
  port: number;
  auth: {
    /**
     * Bearer tokens, one per client. Default [] (auth disabled: the server
     * then binds to loopback only and every connection gets `anonymousScopes`).
     */
    tokens: GatewayToken[];
    /** Scopes of connections when no tokens are configured. Default ["read","write"] (no secrets). */
    anonymousScopes: GatewayScope[];
  };
  /** Largest WebSocket frame accepted, bytes; larger frames close the socket with 1009. Default 1 MiB. */
  maxPayloadBytes: number;
  /** Concurrent /talk connections; more are refused with HTTP 503. Default 1000. */
  maxConnections: number;
  /** Per-connection token bucket; excess requests get `rate_limited`. */
  rateLimit: GatewayRateLimit;
  /**
   * Consecutive rate-limited requests after which the connection is closed
   * with 1008 (a client that ignores `rate_limited`). Default 2 × burst.
   */
  maxRejectedRequests: number;
  /** Sessions (gateway- and client-owned) one connection may own. Default 16. */
  maxSessionsPerConnection: number;
  /** How long a session outlives its owner's disconnect, waiting for talk.session.join, ms. Default 30 000. */
  reconnectGraceMs: number;
  /** WebSocket ping interval, ms; a peer that missed the previous pong is dropped. Default 30 000. */
  heartbeatMs: number;
  /** Decoded bytes one talk.session.appendAudio may carry. Default 256 KiB. */
  maxAudioBytesPerFrame: number;
  /** Characters talk.speak accepts. Default 4000. */
  maxSpeakChars: number;
  /** Audio bytes talk.speak may return before it fails with payload_too_large. Default 8 MiB. */
  maxSpeakAudioBytes: number;
  /**
   * Reply bytes queued (sent, not read by the peer) on one socket, after which the peer is cut as a slow
   * consumer. Default 32 MiB.
   */
  maxBufferedBytes: number;
  /** The same for all the sockets of one token together; the slowest of them is cut first. Default 32 MiB. */
  maxBufferedBytesPerClient: number;
  /** The same for every socket together; the slowest is cut first. Default 64 MiB. */
  maxBufferedBytesTotal: number;
}

/** Every field may be left out; nested objects merge over the defaults. */
export type GatewayOptionsInput = Partial<Omit<GatewayOptions, "auth" | "rateLimit">> & {
  auth?: Partial<GatewayOptions["auth"]>;
  rateLimit?: Partial<GatewayRateLimit>;
};

export const GATEWAY_DEFAULTS: Readonly<GatewayOptions> = Object.freeze({
  host: "127.0.0.1",
  port: 8787,
  auth: Object.freeze({ tokens: [], anonymousScopes: ["read", "write"] }) as GatewayOptions["auth"],
  maxPayloadBytes: 1024 * 1024,
  maxConnections: 1000,
  rateLimit: Object.freeze({ requestsPerSecond: 200, burst: 400 }),
  maxRejectedRequests: 800,
  maxSessionsPerConnection: 16,
  reconnectGraceMs: 30_000,
  heartbeatMs: 30_000,
  maxAudioBytesPerFrame: 256 * 1024,
  maxSpeakChars: 4000,
  maxSpeakAudioBytes: 8 * 1024 * 1024,
  maxBufferedBytes: 32 * 1024 * 1024,
  maxBufferedBytesPerClient: 32 * 1024 * 1024,
  maxBufferedBytesTotal: 64 * 1024 * 1024,
});

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}

/**
 * Merges `input` over the frozen defaults and validates the result. Throws
 * `config_invalid` naming the config key (`server.*`, `gateway.*`, `auth.*`).
 */
export function resolveGatewayOptions(input: GatewayOptionsInput = {}): GatewayOptions {
  const rateLimit = { ...GATEWAY_DEFAULTS.rateLimit, ...input.rateLimit };
  const options: GatewayOptions = {
    ...GATEWAY_DEFAULTS,
    ...stripUndefined(input),
    auth: {
      tokens: [...(input.auth?.tokens ?? GATEWAY_DEFAULTS.auth.tokens)],
      anonymousScopes: [...(input.auth?.anonymousScopes ?? GATEWAY_DEFAULTS.auth.anonymousScopes)],
    },
    rateLimit,
    maxRejectedRequests: input.maxRejectedRequests ?? rateLimit.burst * 2,
  };
  const problems: string[] = [];
  const positive = (key: string, value: number, min = 1): void => {
    if (!Number.isFinite(value) || value < min) problems.push(`${key}: must be a number >= ${min}`);
  };
  if (typeof options.host !== "string" || options.host.length === 0)
    problems.push("server.host: must be a host name");
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535) {
    problems.push("server.port: must be an integer in 0..65535");
  }
  positive("gateway.maxPayloadBytes", options.maxPayloadBytes, 1024);
  positive("gateway.maxConnections", options.maxConnections);
  positive("gateway.rateLimit.requestsPerSecond", options.rateLimit.requestsPerSecond, Number.MIN_VALUE);
  positive("gateway.rateLimit.burst", options.rateLimit.burst);
  positive("gateway.maxRejectedRequests", options.maxRejectedRequests);
  positive("gateway.maxSessionsPerConnection", options.maxSessionsPerConnection);
  positive("gateway.reconnectGraceMs", options.reconnectGraceMs, 0);
  positive("gateway.heartbeatMs", options.heartbeatMs, 10);
  positive("gateway.maxAudioBytesPerFrame", options.maxAudioBytesPerFrame);
  positive("gateway.maxSpeakChars", options.maxSpeakChars);
  positive("gateway.maxSpeakAudioBytes", options.maxSpeakAudioBytes);
  positive("gateway.maxBufferedBytes", options.maxBufferedBytes);
  positive("gateway.maxBufferedBytesPerClient", options.maxBufferedBytesPerClient);
  positive("gateway.maxBufferedBytesTotal", options.maxBufferedBytesTotal);
  const seen = new Set<string>();
  options.auth.tokens.forEach((t, i) => {
    if (!t || typeof t.token !== "string" || t.token.length === 0)
      problems.push(`auth.tokens.${i}.token: required`);
    else if (seen.has(t.token)) problems.push(`auth.tokens.${i}.token: duplicate token`);
    else seen.add(t.token);
    if (
      !Array.isArray(t?.scopes) ||
      t.scopes.length === 0 ||
      t.scopes.some((s) => !GATEWAY_SCOPES.includes(s))
    ) {
      problems.push(`auth.tokens.${i}.scopes: must be a non-empty list of ${GATEWAY_SCOPES.join(", ")}`);
    }
  });
  if (options.auth.anonymousScopes.some((s) => !GATEWAY_SCOPES.includes(s))) {
    problems.push(`auth.anonymousScopes: must be a list of ${GATEWAY_SCOPES.join(", ")}`);
  }
  if (options.auth.tokens.length === 0 && !isLoopbackHost(options.host)) {
    // Without tokens anyone who can reach the port could drive sessions and spend provider credit.
    problems.push(
      `server.host: "${options.host}" is not a loopback address; configure auth.tokens to bind it`,
    );
  }
  if (problems.length > 0) {
    throw new TalkError("config_invalid", `invalid gateway options:\n  - ${problems.join("\n  - ")}`, {
      details: { problems },
    });
  }
  return options;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
