/**
 * The Talk error catalogue. Every error that crosses a layer boundary is a
 * TalkError with a stable `code`. Codes are part of the public API: they are
 * listed in docs/errors.md and a test keeps the list and this catalogue in
 * step. A retired code is never reused. Each code carries the HTTP status an
 * HTTP route answers it with (as Fastify's `createError(code, message,
 * statusCode)` does), so no surface keeps its own code -> status table.
 */

export const TALK_ERROR_CODES = {
  invalid_request: { retryable: false, httpStatus: 400, message: "The request is malformed." },
  invalid_params: { retryable: false, httpStatus: 400, message: "The request parameters are invalid." },
  unknown_method: { retryable: false, httpStatus: 404, message: "The method does not exist." },
  unauthorized: {
    retryable: false,
    httpStatus: 401,
    message: "Authentication is required or the token is invalid.",
  },
  forbidden: { retryable: false, httpStatus: 403, message: "The token's scope does not allow this method." },
  rate_limited: { retryable: true, httpStatus: 429, message: "Too many requests; slow down." },
  unsupported_media_type: {
    retryable: false,
    httpStatus: 415,
    message: "The request's content type is not accepted here.",
  },
  route_not_found: { retryable: false, httpStatus: 404, message: "No such route." },
  payload_too_large: {
    retryable: false,
    httpStatus: 413,
    message: "The payload exceeds the configured limit.",
  },
  unsupported_combination: {
    retryable: false,
    httpStatus: 400,
    message: "The mode / transport / brain combination is not supported.",
  },
  use_talk_client_create: {
    retryable: false,
    httpStatus: 400,
    message: "Client-owned transports are created with talk.client.create.",
  },
  use_talk_session_create: {
    retryable: false,
    httpStatus: 400,
    message: "Gateway-owned transports are created with talk.session.create.",
  },
  session_not_found: { retryable: false, httpStatus: 404, message: "No such session." },
  session_closed: { retryable: false, httpStatus: 409, message: "The session is closed." },
  session_limit: {
    retryable: true,
    httpStatus: 429,
    message: "The server holds as many sessions as it is configured for.",
  },
  invalid_join_token: { retryable: false, httpStatus: 403, message: "The join token is invalid or revoked." },
  not_session_owner: {
    retryable: false,
    httpStatus: 403,
    message: "This connection does not own the session.",
  },
  stale_turn: { retryable: false, httpStatus: 409, message: "The turn id is not the active turn." },
  no_active_turn: { retryable: false, httpStatus: 409, message: "The session has no active turn." },
  turn_already_active: { retryable: false, httpStatus: 409, message: "A turn is already active." },
  invalid_state: {
    retryable: false,
    httpStatus: 409,
    message: "The object is not in a state that allows this call.",
  },
  invalid_audio: {
    retryable: false,
    httpStatus: 400,
    message: "The audio is malformed or in an unsupported format.",
  },
  provider_not_found: { retryable: false, httpStatus: 404, message: "No such provider is configured." },
  provider_unavailable: { retryable: true, httpStatus: 503, message: "The provider is not available." },
  provider_error: { retryable: true, httpStatus: 502, message: "The provider failed." },
  capability_unsupported: {
    retryable: false,
    httpStatus: 501,
    message: "The provider does not declare this capability.",
  },
  tool_not_found: { retryable: false, httpStatus: 404, message: "No such tool call or tool." },
  tool_denied: { retryable: false, httpStatus: 403, message: "Tool policy denies this tool." },
  cancelled: { retryable: false, httpStatus: 409, message: "The work was cancelled." },
  timeout: { retryable: true, httpStatus: 504, message: "The operation timed out." },
  config_invalid: { retryable: false, httpStatus: 500, message: "The configuration is invalid." },
  owner_unreachable: {
    retryable: true,
    httpStatus: 503,
    message: "The worker owning the session did not answer.",
  },
  worker_not_found: { retryable: false, httpStatus: 404, message: "No such live worker." },
  shutting_down: {
    retryable: true,
    httpStatus: 503,
    message: "The server is draining and accepts no new work.",
  },
  recording_failed: {
    retryable: false,
    httpStatus: 507,
    message: "The call recording could not be written; recording stopped, the call goes on.",
  },
  recording_not_found: { retryable: false, httpStatus: 404, message: "No such recording." },
  internal: { retryable: true, httpStatus: 500, message: "Internal error." },
} as const satisfies Record<string, { retryable: boolean; httpStatus: number; message: string }>;

export type TalkErrorCode = keyof typeof TALK_ERROR_CODES;

export interface TalkErrorOptions {
  cause?: unknown;
  /** Structured detail safe to show to API clients (never secrets). */
  details?: Record<string, unknown>;
  /** Overrides the catalogue's retryable flag. */
  retryable?: boolean;
}

export class TalkError extends Error {
  override readonly name = "TalkError";
  readonly code: TalkErrorCode;
  readonly retryable: boolean;
  /** The HTTP status of this code (TALK_ERROR_CODES[code].httpStatus): what an HTTP route answers. */
  readonly httpStatus: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: TalkErrorCode, message?: string, options: TalkErrorOptions = {}) {
    super(
      message ?? TALK_ERROR_CODES[code].message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.retryable = options.retryable ?? TALK_ERROR_CODES[code].retryable;
    this.httpStatus = TALK_ERROR_CODES[code].httpStatus;
    this.details = options.details;
  }

  /** The wire shape used in `{type:"res", ok:false, error}` frames. */
  toJSON(): { code: TalkErrorCode; message: string; retryable: boolean; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

export function isTalkError(err: unknown): err is TalkError {
  return err instanceof TalkError;
}

/** Wraps anything thrown into a TalkError, keeping TalkErrors as they are. */
export function toTalkError(err: unknown, fallback: TalkErrorCode = "internal"): TalkError {
  if (err instanceof TalkError) return err;
  if (err instanceof Error && err.name === "AbortError")
    return new TalkError("cancelled", err.message, { cause: err });
  return new TalkError(fallback, undefined, { cause: err });
}
