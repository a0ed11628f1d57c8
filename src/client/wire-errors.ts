import { TALK_ERROR_CODES, TalkError } from "../core/index.js";
import type { TalkErrorCode } from "../core/index.js";
import type { WireError } from "../gateway/index.js";

/** The TalkError a response's wire error stands for. Unknown codes (newer servers) become `internal`. */
export function fromWire(error: WireError): TalkError {
  const code: TalkErrorCode = error.code in TALK_ERROR_CODES ? error.code : "internal";
  return new TalkError(code, error.message, {
    retryable: error.retryable,
    ...(error.details !== undefined ? { details: error.details } : {}),
  });
}
