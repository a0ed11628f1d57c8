import { TalkError } from "../../core/index.js";
import { readBounded } from "./read-bounded.js";

/**
 * What the OpenAI-compatible audio providers (STT, TTS) share: endpoint
 * options and their checks, one request with a timeout and an abort that
 * closes the connection, and the mapping of HTTP failures onto TalkError codes.
 */

/** OpenAI's own API; local servers (faster-whisper-server / speaches, LocalAI, openedai-speech) have their own. */
export const OPENAI_API_BASE_URL = "https://api.openai.com/v1";

/** Error bodies are read only this far: enough for a message, never a memory hazard. */
const MAX_ERROR_BODY_CHARS = 4096;

export interface AudioEndpoint {
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** "OpenAI-compatible STT" etc., for messages. */
  what: string;
}

/** Checks endpoint options; throws config_invalid naming the field. */
export function validateEndpointOptions(
  prefix: string,
  o: { baseUrl: unknown; apiKey?: unknown; timeoutMs: unknown; id: unknown },
): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `${prefix}: ${field} ${why}`);
  };
  if (typeof o.baseUrl !== "string" || !o.baseUrl) bad("baseUrl", "is required");
  let url: URL | undefined;
  try {
    url = new URL(o.baseUrl as string);
  } catch {
    bad("baseUrl", "must be an absolute http(s) URL");
  }
  if (url && url.protocol !== "http:" && url.protocol !== "https:") bad("baseUrl", "must use http or https");
  // Credentials in the URL would end up in logs and errors; they belong in apiKey.
  if (url && (url.username || url.password)) bad("baseUrl", "must not contain credentials; use apiKey");
  if (o.apiKey !== undefined && (typeof o.apiKey !== "string" || /[\r\n]/.test(o.apiKey))) {
    bad("apiKey", "must be a single-line string");
  }
  if (!Number.isInteger(o.timeoutMs) || (o.timeoutMs as number) < 1)
    bad("timeoutMs", "must be a positive integer (ms)");
  if (typeof o.id !== "string" || !o.id) bad("id", "must be a non-empty string");
}

/** Configuration only: a probe would spend a request (and money) on every health check. */
export function endpointHealth(endpoint: AudioEndpoint, model: string): { ok: boolean; detail: string } {
  const official = new URL(endpoint.baseUrl).host === new URL(OPENAI_API_BASE_URL).host;
  if (official && !endpoint.apiKey) {
    return { ok: false, detail: `${endpoint.baseUrl} needs an apiKey (model ${model})` };
  }
  return { ok: true, detail: `${endpoint.baseUrl}, model ${model}` };
}

export interface OpenRequest {
  response: Response;
  /** Aborts the HTTP exchange (the consumer stopped early). */
  stop(): void;
  /** Clears the timer; call once the exchange is over. */
  done(): void;
  /** The TalkError for a failure while reading the body: cancelled, timeout, or provider_error. */
  failure(err: unknown): TalkError;
}

/**
 * POSTs `body` to `url` with the bearer key (when there is one). Resolves with
 * a successful response whose body is still to be read, or rejects with a
 * TalkError: `cancelled` (signal), `timeout`, `provider_unavailable`
 * (unreachable, 5xx), `rate_limited` (429), or the mapping of httpError().
 * The timeout covers the whole exchange, body included, until done().
 */
export async function postRequest(
  endpoint: AudioEndpoint,
  path: string,
  body: RequestInit["body"],
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<OpenRequest> {
  if (signal.aborted) throw cancelledError(signal, endpoint.what);
  const stop = new AbortController();
  const httpSignal = AbortSignal.any([signal, stop.signal]);
  const timer = setTimeout(() => {
    stop.abort(
      new TalkError("timeout", `${endpoint.what} did not answer within ${endpoint.timeoutMs} ms.`, {
        details: { timeoutMs: endpoint.timeoutMs },
      }),
    );
  }, endpoint.timeoutMs);
  const failure = (err: unknown): TalkError => {
    if (signal.aborted) return cancelledError(signal, endpoint.what);
    const reason: unknown = stop.signal.reason;
    if (reason instanceof TalkError && reason.code === "timeout") return reason;
    if (err instanceof TalkError) return err;
    return new TalkError("provider_error", `${endpoint.what}: the response stream failed.`, {
      cause: err,
    });
  };
  const done = (): void => clearTimeout(timer);
  const allHeaders: Record<string, string> = { ...headers };
  if (endpoint.apiKey) allHeaders.authorization = `Bearer ${endpoint.apiKey}`;
  let response: Response;
  try {
    response = await fetch(`${endpoint.baseUrl}${path}`, {
      method: "POST",
      headers: allHeaders,
      body,
      signal: httpSignal,
    });
  } catch (err) {
    done();
    if (httpSignal.aborted) throw failure(err);
    throw new TalkError(
      "provider_unavailable",
      `${endpoint.what}: ${endpoint.baseUrl} could not be reached: ${redact((err as Error).message, endpoint.apiKey)}`,
      { cause: err },
    );
  }
  if (!response.ok) {
    try {
      throw await httpError(response, endpoint);
    } catch (err) {
      throw failure(err);
    } finally {
      done();
    }
  }
  return {
    response,
    stop: () => {
      if (!httpSignal.aborted) stop.abort(new TalkError("cancelled", `${endpoint.what}: the request ended.`));
    },
    done,
    failure,
  };
}

/**
 * Maps an HTTP failure: 401/403 provider_error (not retryable, details.reason
 * "auth"; the body is not read, servers quote the key there), 429
 * rate_limited, 408 timeout, 5xx provider_unavailable, 400/404/413/422
 * invalid_params (the server refused this request: unknown model or voice,
 * text too long, audio it cannot read), anything else provider_error.
 * `details.status` always; `details.upstreamCode` when the body names one.
 */
export async function httpError(response: Response, endpoint: AudioEndpoint): Promise<TalkError> {
  const status = response.status;
  if (status === 401 || status === 403) {
    await response.body?.cancel().catch(() => {});
    return new TalkError(
      "provider_error",
      `${endpoint.what}: ${endpoint.baseUrl} rejected the credentials (HTTP ${status}).`,
      { details: { status, reason: "auth" }, retryable: false },
    );
  }
  const text = await readBounded(response, MAX_ERROR_BODY_CHARS).catch(() => "");
  const upstream = parseUpstreamError(text);
  const message = redact((upstream.message ?? text.trim()).slice(0, 300), endpoint.apiKey);
  const suffix = message ? `: ${message}` : "";
  const details: Record<string, unknown> = {
    status,
    ...(upstream.code ? { upstreamCode: upstream.code } : {}),
  };
  const what = `${endpoint.what} answered HTTP ${status}${suffix}`;
  if (status === 429) {
    const retryAfter = Number(response.headers.get("retry-after"));
    if (Number.isFinite(retryAfter) && retryAfter >= 0) details.retryAfterMs = Math.round(retryAfter * 1000);
    return new TalkError("rate_limited", what, { details });
  }
  if (status === 408) return new TalkError("timeout", what, { details });
  if (status >= 500) return new TalkError("provider_unavailable", what, { details });
  if (status === 400 || status === 404 || status === 413 || status === 422) {
    return new TalkError("invalid_params", what, { details });
  }
  return new TalkError("provider_error", what, { details, retryable: false });
}

export function cancelledError(signal: AbortSignal, what: string): TalkError {
  const reason: unknown = signal.reason;
  if (reason instanceof TalkError && reason.code === "cancelled") return reason;
  return new TalkError("cancelled", `${what}: cancelled.`, { cause: reason });
}

/** Removes the key, and anything shaped like an OpenAI key, from upstream text. */
export function redact(text: string, apiKey: string | undefined): string {
  const out = apiKey ? text.split(apiKey).join("[redacted]") : text;
  return out.replace(/\b(sk|ek|rk)-[A-Za-z0-9_*.-]{4,}/g, "[redacted]");
}

function parseUpstreamError(text: string): { message?: string; code?: string } {
  try {
    const parsed: unknown = JSON.parse(text);
    const err = isRecord(parsed) ? parsed.error : undefined;
    if (typeof err === "string") return { message: err };
    if (!isRecord(err)) {
      // FastAPI-style servers answer {"detail": "..."}.
      const detail = isRecord(parsed) ? parsed.detail : undefined;
      return typeof detail === "string" ? { message: detail } : {};
    }
    return {
      ...(typeof err.message === "string" ? { message: err.message } : {}),
      ...(typeof err.code === "string" ? { code: err.code } : {}),
    };
  } catch {
    return {};
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A field explicitly set to undefined keeps its default (config loaders produce such fields). */
export function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
