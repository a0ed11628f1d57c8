/**
 * The URLs a carrier reaches us on: PUBLIC_URL checked once, the URL a
 * carrier signed for a request we received, and the WebSocket URL of our
 * media-stream route. Also what counts as a loopback peer (local demo mode).
 */
import { TalkError } from "../core/index.js";

/**
 * Parses and checks PUBLIC_URL: an absolute http(s) URL without query or
 * fragment. Returned without a trailing slash so paths can be appended.
 */
export function parsePublicUrl(publicUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(publicUrl);
  } catch (cause) {
    throw new TalkError("config_invalid", `publicUrl "${publicUrl}" is not an absolute URL`, { cause });
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new TalkError("config_invalid", `publicUrl must be http:// or https://, got "${parsed.protocol}"`);
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new TalkError("config_invalid", "publicUrl must not carry a query string or fragment");
  }
  return publicUrl.replace(/\/+$/, "");
}

/**
 * The URL a carrier signed for a request our server received as `requestUrl`
 * (path + query, as Fastify's `request.url` gives it). Carriers sign the URL they
 * requested, which is PUBLIC_URL's origin plus the path it called; behind a
 * proxy that strips a path prefix, PUBLIC_URL carries that prefix.
 */
export function signedWebhookUrl(publicUrl: string, requestUrl: string): string {
  return parsePublicUrl(publicUrl) + (requestUrl.startsWith("/") ? requestUrl : `/${requestUrl}`);
}

/** The WebSocket URL of a path under PUBLIC_URL: https gives wss, http gives ws (local use). */
export function streamUrlFor(publicUrl: string, path: string): string {
  const base = parsePublicUrl(publicUrl).replace(/^http/i, "ws");
  return base + (path.startsWith("/") ? path : `/${path}`);
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4 === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
