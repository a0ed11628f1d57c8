/**
 * The codec layer's error catalogue. src/codecs is a pure edge layer and may
 * not import src/core, so it has its own error class; the codes are chosen to
 * line up with the Talk catalogue (`invalid_audio`, `invalid_state`) so an
 * adapter can map a CodecError onto a TalkError without a lookup table.
 * Codes are listed in docs/codecs.md and a test keeps the two in step. A
 * retired code is never reused.
 */
export const CODEC_ERROR_CODES = {
  invalid_audio: "The audio is malformed (odd byte length, wrong frame size, wrong channel layout).",
  invalid_options: "The options are out of range or of the wrong type.",
  unsupported_rate: "The sample rate or rate pair is not supported.",
  invalid_packet: "The compressed packet is empty, truncated or corrupt.",
  invalid_state: "The object is closed.",
  codec_unavailable: "A native or WebAssembly codec could not be loaded or created.",
} as const satisfies Record<string, string>;

export type CodecErrorCode = keyof typeof CODEC_ERROR_CODES;

export interface CodecErrorOptions {
  cause?: unknown;
}

export class CodecError extends Error {
  override readonly name = "CodecError";
  readonly code: CodecErrorCode;
  /** Codec failures are properties of the input or the build; retrying the same call cannot help. */
  readonly retryable = false;

  constructor(code: CodecErrorCode, message?: string, options: CodecErrorOptions = {}) {
    super(
      message ?? CODEC_ERROR_CODES[code],
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
  }
}

export function isCodecError(err: unknown): err is CodecError {
  return err instanceof CodecError;
}
