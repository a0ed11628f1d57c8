/**
 * Base64 as carriers' JSON media frames and signatures carry it, one copy for
 * every carrier: strict (standard alphabet, padded), because Buffer.from
 * silently skips characters that are not base64 and would turn a corrupt
 * frame into noise instead of a rejection.
 */
export const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The standard base64 alphabet, by byte (padding aside). */
const ALPHABET = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
  ALPHABET[c.charCodeAt(0)] = 1;
const EQUALS = 0x3d;
const QUOTE = 0x22;

/**
 * STRICT_BASE64 over bytes, for a JSON string value read in place: where
 * non-empty base64 of at most `maxChars` characters starting at `start` ends
 * (at its closing quote), or undefined when the bytes there are anything else.
 * The same rule as the expression: whole quads, `=` only as the last one or two.
 */
export function strictBase64End(bytes: Uint8Array, start: number, maxChars: number): number | undefined {
  let at = start;
  while (at < bytes.length && ALPHABET[bytes[at]!] === 1) at++;
  let padding = 0;
  while (padding < 2 && bytes[at] === EQUALS) {
    at++;
    padding++;
  }
  const length = at - start;
  if (length === 0 || length % 4 !== 0 || length > maxChars || bytes[at] !== QUOTE) return undefined;
  return at;
}

/** Audio bytes as base64, without copying them. */
export function base64Of(audio: Uint8Array): string {
  return Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64");
}
