/**
 * Ephemeral tokens for client-owned Gemini Live sessions:
 * `POST {baseUrl}/v1alpha/auth_tokens` with the server key
 * (`x-goog-api-key`) and `{uses, expireTime, newSessionExpireTime,
 * bidiGenerateContentSetup}` returns an AuthToken whose `name` is the token.
 * The client connects to the v1alpha `BidiGenerateContentConstrained`
 * WebSocket with `?access_token=<name>`; the setup bound into the token is
 * used instead of the client's own (so the Gateway keeps owning
 * instructions and tools). Sources:
 * https://ai.google.dev/gemini-api/docs/ephemeral-tokens and the Live API
 * reference (https://ai.google.dev/api/live).
 */
import { cancelledError, TalkError } from "../../core/index.js";

export interface AuthTokenRequest {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** How many sessions the token may start. */
  uses: number;
  /** Until when messages may be sent on a session started with it. */
  expireTime: Date;
  /** Until when a session may be started with it. */
  newSessionExpireTime: Date;
  /** The BidiGenerateContentSetup the token is bound to. */
  setup: Record<string, unknown>;
  signal: AbortSignal;
}

/** Mints a token; provider_error with the status on refusal (retryable for 429 / 5xx), provider_unavailable unreachable. */
export async function mintGeminiAuthToken(
  request: AuthTokenRequest,
): Promise<{ token: string; expireTime: Date }> {
  const { signal } = request;
  if (signal.aborted) throw cancelledError(signal);
  const timeout = AbortSignal.timeout(request.timeoutMs);
  let response: Response;
  try {
    response = await fetch(`${request.baseUrl.replace(/\/+$/, "")}/v1alpha/auth_tokens`, {
      method: "POST",
      headers: { "x-goog-api-key": request.apiKey, "content-type": "application/json" },
      body: JSON.stringify({
        uses: request.uses,
        expireTime: request.expireTime.toISOString(),
        newSessionExpireTime: request.newSessionExpireTime.toISOString(),
        bidiGenerateContentSetup: request.setup,
      }),
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch (err) {
    if (signal.aborted) throw cancelledError(signal);
    if (timeout.aborted) throw new TalkError("timeout", "Gemini did not answer the token request in time.");
    throw new TalkError("provider_unavailable", `Gemini could not be reached: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    const upstream = upstreamError(text);
    throw new TalkError(
      "provider_error",
      `Gemini refused the token request (HTTP ${response.status}): ${redactKey(upstream.message ?? response.statusText, request.apiKey)}`,
      {
        retryable: response.status === 429 || response.status >= 500,
        details: { status: response.status, ...(upstream.status ? { upstreamCode: upstream.status } : {}) },
      },
    );
  }
  let body: { name?: unknown; expireTime?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new TalkError("provider_error", "Gemini answered the token request with invalid JSON.", {
      details: { status: response.status },
    });
  }
  if (typeof body.name !== "string" || body.name === "")
    throw new TalkError("provider_error", "Gemini's token response has no name.", {
      details: { status: response.status },
    });
  const expires = typeof body.expireTime === "string" ? new Date(body.expireTime) : request.expireTime;
  return { token: body.name, expireTime: Number.isNaN(expires.getTime()) ? request.expireTime : expires };
}

/** Google's error body: `{error: {code, message, status}}`. */
function upstreamError(text: string): { message?: string; status?: string } {
  try {
    const err = (JSON.parse(text) as { error?: { message?: unknown; status?: unknown } }).error;
    return {
      ...(typeof err?.message === "string" ? { message: err.message.slice(0, 300) } : {}),
      ...(typeof err?.status === "string" ? { status: err.status } : {}),
    };
  } catch {
    return {};
  }
}

function redactKey(text: string, apiKey: string): string {
  const out = apiKey ? text.split(apiKey).join("[redacted]") : text;
  // Google API keys: "AIza" and 35 more characters.
  return out.replace(/AIza[0-9A-Za-z_-]{20,}/g, "[redacted]");
}
