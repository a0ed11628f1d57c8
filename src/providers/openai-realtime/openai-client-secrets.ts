import { TalkError } from "../../core/index.js";
import type { RealtimeToolDefinition } from "../../core/index.js";

/**
 * Minting of OpenAI Realtime client secrets (GA API):
 * `POST {baseUrl}/realtime/client_secrets` with a server-side key returns a
 * short-lived `ek_...` secret bound to a session configuration, which a
 * browser or native client uses to reach the Realtime API itself (WebRTC
 * `/realtime/calls`, or the WebSocket). The server key never leaves here.
 */

export interface ClientSecretEndpoint {
  /** API base URL including the version path, e.g. "https://api.openai.com/v1". */
  baseUrl: string;
  /** Server-side API key. Never logged, never put in an error. */
  apiKey: string;
  /** Upper bound on the request, ms. */
  timeoutMs: number;
  /** Injectable for tests of unusual transports; defaults to global fetch. */
  fetch?: typeof fetch;
  /** The vendor's name in errors. Default "OpenAI". */
  label?: string;
}

export interface ClientSecretRequest {
  model: string;
  voice: string;
  /** Built by the Gateway from trusted config. */
  instructions: string;
  tools: RealtimeToolDefinition[];
  /** Lifetime of the secret, seconds (the API accepts 10..7200). */
  ttlSeconds: number;
  signal: AbortSignal;
}

export interface MintedClientSecret {
  /** The ephemeral key ("ek_..."). */
  value: string;
  expiresAt: Date;
  /** The effective session the API reports, as sent back. */
  session: Record<string, unknown>;
}

/** The documented request body (GA shape). */
export interface ClientSecretRequestBody {
  expires_after: { anchor: "created_at"; seconds: number };
  session: {
    type: "realtime";
    model: string;
    instructions: string;
    audio: { output: { voice: string } };
    tools: { type: "function"; name: string; description: string; parameters: Record<string, unknown> }[];
  };
}

export function buildClientSecretBody(request: Omit<ClientSecretRequest, "signal">): ClientSecretRequestBody {
  return {
    expires_after: { anchor: "created_at", seconds: request.ttlSeconds },
    session: {
      type: "realtime",
      model: request.model,
      instructions: request.instructions,
      audio: { output: { voice: request.voice } },
      tools: request.tools.map((t) => ({
        type: "function",
        name: t.name,
        description: t.description,
        parameters: t.parameters,
      })),
    },
  };
}

/**
 * Mints a secret. `body` is the request body of a dialect of this endpoint
 * (a server that takes only `expires_after`); default the OpenAI GA body.
 */
export async function mintClientSecret(
  endpoint: ClientSecretEndpoint,
  request: ClientSecretRequest,
  requestBody: unknown = buildClientSecretBody(request),
): Promise<MintedClientSecret> {
  const { signal } = request;
  const vendor = endpoint.label ?? "OpenAI";
  if (signal.aborted) throw cancelled(signal);
  const timeout = AbortSignal.timeout(endpoint.timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  const url = `${endpoint.baseUrl.replace(/\/+$/, "")}/realtime/client_secrets`;
  const doFetch = endpoint.fetch ?? fetch;

  let response: Response;
  try {
    response = await doFetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${endpoint.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(requestBody),
      signal: combined,
    });
  } catch (err) {
    if (signal.aborted) throw cancelled(signal);
    if (timeout.aborted)
      throw new TalkError("timeout", `${vendor} did not answer the client secret request in time.`);
    // The cause (an undici error) carries no headers, so no key can leak through it.
    throw new TalkError(
      "provider_unavailable",
      `${vendor} could not be reached: ${redact((err as Error).message, endpoint.apiKey)}`,
      {
        cause: err,
      },
    );
  }

  let text: string;
  try {
    text = await response.text();
  } catch (err) {
    if (signal.aborted) throw cancelled(signal);
    throw new TalkError("provider_error", `Reading the ${vendor} client secret response failed.`, {
      cause: err,
      details: { status: response.status },
    });
  }

  if (!response.ok) {
    const upstream = parseUpstreamError(text);
    const message = upstream.message ? redact(upstream.message, endpoint.apiKey) : response.statusText;
    throw new TalkError(
      "provider_error",
      `${vendor} refused the client secret request (HTTP ${response.status}): ${message}`,
      {
        // 429 and 5xx are worth retrying; a bad key or request is not.
        retryable: response.status === 429 || response.status >= 500,
        details: { status: response.status, ...(upstream.code ? { upstreamCode: upstream.code } : {}) },
      },
    );
  }

  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new TalkError("provider_error", `${vendor} answered the client secret request with invalid JSON.`, {
      details: { status: response.status },
    });
  }
  const parsed = body as { value?: unknown; expires_at?: unknown; session?: unknown };
  if (typeof parsed.value !== "string" || parsed.value === "" || typeof parsed.expires_at !== "number") {
    throw new TalkError("provider_error", `${vendor}'s client secret response lacks value or expires_at.`, {
      details: { status: response.status },
    });
  }
  return {
    value: parsed.value,
    expiresAt: new Date(parsed.expires_at * 1000),
    session:
      typeof parsed.session === "object" && parsed.session !== null
        ? (parsed.session as Record<string, unknown>)
        : {},
  };
}

function parseUpstreamError(text: string): { message?: string; code?: string } {
  try {
    const err = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } }).error;
    return {
      ...(typeof err?.message === "string" ? { message: err.message } : {}),
      ...(typeof err?.code === "string" ? { code: err.code } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * Removes the key and anything shaped like an OpenAI key from upstream text:
 * OpenAI's 401 message quotes (a masked form of) the key it was given.
 */
export function redact(text: string, apiKey: string): string {
  let out = apiKey ? text.split(apiKey).join("[redacted]") : text;
  out = out.replace(/\b(sk|ek|rk|xai)-[A-Za-z0-9_*.-]{4,}/g, "[redacted]");
  return out;
}

function cancelled(signal: AbortSignal): TalkError {
  return new TalkError("cancelled", "The client secret request was cancelled.", { cause: signal.reason });
}
