/**
 * The Talk error catalogue. Every error that crosses a layer boundary is a
 * TalkError with a stable `code`. Codes are part of the public API: they are
 * listed in docs/errors.md and a test keeps the list and this catalogue in
 * step. A retired code is never reused.
 */

export const TALK_ERROR_CODES = {
  invalid_request: { retryable: false, message: "The request is malformed." },
  invalid_params: { retryable: false, message: "The request parameters are invalid." },
  unknown_method: { retryable: false, message: "The method does not exist." },
  unauthorized: { retryable: false, message: "Authentication is required or the token is invalid." },
  forbidden: { retryable: false, message: "The token's scope does not allow this method." },
  rate_limited: { retryable: true, message: "Too many requests; slow down." },
  payload_too_large: { retryable: false, message: "The payload exceeds the configured limit." },
  unsupported_combination: {
    retryable: false,
    message: "The mode / transport / brain combination is not supported.",
  },
  use_talk_client_create: {
    retryable: false,
    message: "Client-owned transports are created with talk.client.create.",
  },
  use_talk_session_create: {
    retryable: false,
    message: "Gateway-owned transports are created with talk.session.create.",
  },
  session_not_found: { retryable: false, message: "No such session." },
  session_closed: { retryable: false, message: "The session is closed." },
  session_limit: { retryable: true, message: "The server holds as many sessions as it is configured for." },
  invalid_join_token: { retryable: false, message: "The join token is invalid or revoked." },
  not_session_owner: { retryable: false, message: "This connection does not own the session." },
  stale_turn: { retryable: false, message: "The turn id is not the active turn." },
  no_active_turn: { retryable: false, message: "The session has no active turn." },
  turn_already_active: { retryable: false, message: "A turn is already active." },
  invalid_state: { retryable: false, message: "The object is not in a state that allows this call." },
  invalid_audio: { retryable: false, message: "The audio is malformed or in an unsupported format." },
  provider_not_found: { retryable: false, message: "No such provider is configured." },
  provider_unavailable: { retryable: true, message: "The provider is not available." },
  provider_error: { retryable: true, message: "The provider failed." },
  capability_unsupported: { retryable: false, message: "The provider does not declare this capability." },
  tool_not_found: { retryable: false, message: "No such tool call or tool." },
  tool_denied: { retryable: false, message: "Tool policy denies this tool." },
  cancelled: { retryable: false, message: "The work was cancelled." },
  timeout: { retryable: true, message: "The operation timed out." },
  config_invalid: { retryable: false, message: "The configuration is invalid." },
  owner_unreachable: { retryable: true, message: "The worker owning the session did not answer." },
  shutting_down: { retryable: true, message: "The server is draining and accepts no new work." },
  internal: { retryable: true, message: "Internal error." },
} as const satisfies Record<string, { retryable: boolean; message: string }>;

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
  readonly details: Record<string, unknown> | undefined;

  constructor(code: TalkErrorCode, message?: string, options: TalkErrorOptions = {}) {
    super(
      message ?? TALK_ERROR_CODES[code].message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.retryable = options.retryable ?? TALK_ERROR_CODES[code].retryable;
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
