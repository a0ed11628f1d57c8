/**
 * Base64 as carriers' JSON media frames and signatures carry it, one copy for
 * every carrier: strict (standard alphabet, padded), because Buffer.from
 * silently skips characters that are not base64 and would turn a corrupt
 * frame into noise instead of a rejection.
 */
export const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Audio bytes as base64, without copying them. */
export function base64Of(audio: Uint8Array): string {
  return Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64");
}
