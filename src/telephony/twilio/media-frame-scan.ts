/**
 * Twilio's `media` frame read in place from its bytes, for the 50 frames a
 * second of every call: the fields in the order of the Media Streams
 * reference's example, compact (as a JSON serializer writes it; the reference
 * prints its examples indented and says nothing of the wire's whitespace:
 * were Twilio's frames laid out otherwise, each would take the general path,
 * correct and only without this saving),
 *
 *   {"event":"media","sequenceNumber":"N","media":{"track":"inbound","chunk":"N","timestamp":"N","payload":"B64"},"streamSid":"SID"}
 *
 * is matched byte by byte against that template, without turning the frame
 * into a string and a parsed object graph first. Why: JSON.parse was the
 * largest single cost of a relayed frame (bench/telephony-capacity.bench.ts
 * --cpu-prof), and it internalizes short string values, so every frame's
 * unique `sequenceNumber`, `chunk` and `timestamp` became strings in V8's old
 * space: garbage only a major GC collects, and major GCs are what stalls a
 * loaded relay (bench/twilio-frame-parse.bench.ts: JSON.parse alone leaves
 * ~50 bytes of old space a frame, the whole general path 120-210, this none).
 *
 * Anything else (whitespace, another field order, an escape, an unknown
 * field, another stream's sid, a payload that is not strict base64 or is too
 * long, a number of more than 15 digits) is not an error here: the caller
 * parses the frame the general way, which accepts or refuses it with the
 * reason it names. So this path only ever accepts what that one would, with
 * the same result (media-frame-scan.test.ts compares them frame by frame).
 */
import { strictBase64End } from "../carrier/base64.js";

/** A media message as parseTwilioMessage gives it (TwilioMediaMessage; declared here, which that module imports). */
export interface ScannedMediaFrame {
  event: "media";
  sequenceNumber: string;
  streamSid: string;
  media: { track: "inbound" | "outbound"; chunk: string; timestamp: string; payload: string };
  audio: Uint8Array;
}

const bytes = (s: string): Buffer => Buffer.from(s, "latin1");
const HEAD = bytes('{"event":"media","sequenceNumber":"');
const TRACK = bytes('","media":{"track":"');
const INBOUND = bytes("inbound");
const OUTBOUND = bytes("outbound");
const CHUNK = bytes('","chunk":"');
const TIMESTAMP = bytes('","timestamp":"');
const PAYLOAD = bytes('","payload":"');
const SID = bytes('"},"streamSid":"');
const TAIL = bytes('"}');

const QUOTE = 0x22;
/** The most digits the general path's check (/^\d{1,15}$/) accepts. */
const MAX_DIGITS = 15;

/**
 * The media message of a frame of the stream `streamSid` in Twilio's compact
 * shape, or undefined when the frame is anything else (then parse it the
 * general way). `maxPayloadChars`: the longest base64 payload accepted.
 */
export function scanTwilioMediaFrame(
  frame: Buffer,
  streamSid: string,
  maxPayloadChars: number,
): ScannedMediaFrame | undefined {
  const cursor = { at: 0 };
  if (!literal(frame, cursor, HEAD)) return undefined;
  const sequenceNumber = digits(frame, cursor);
  if (sequenceNumber === undefined || !literal(frame, cursor, TRACK)) return undefined;
  const track = literal(frame, cursor, INBOUND)
    ? "inbound"
    : literal(frame, cursor, OUTBOUND)
      ? "outbound"
      : undefined;
  if (track === undefined || !literal(frame, cursor, CHUNK)) return undefined;
  const chunk = digits(frame, cursor);
  if (chunk === undefined || !literal(frame, cursor, TIMESTAMP)) return undefined;
  const timestamp = digits(frame, cursor);
  if (timestamp === undefined || !literal(frame, cursor, PAYLOAD)) return undefined;
  const start = cursor.at;
  const end = strictBase64End(frame, start, maxPayloadChars);
  if (end === undefined) return undefined;
  cursor.at = end;
  if (!literal(frame, cursor, SID) || !sameAscii(frame, cursor, streamSid)) return undefined;
  if (!literal(frame, cursor, TAIL) || cursor.at !== frame.length) return undefined;
  const payload = frame.toString("latin1", start, end);
  const decoded = Buffer.from(payload, "base64");
  return {
    event: "media",
    sequenceNumber,
    streamSid,
    media: { track, chunk, timestamp, payload },
    audio: new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength),
  };
}

function literal(frame: Buffer, cursor: { at: number }, expected: Buffer): boolean {
  const { at } = cursor;
  if (at + expected.length > frame.length) return false;
  for (let i = 0; i < expected.length; i++) if (frame[at + i] !== expected[i]) return false;
  cursor.at = at + expected.length;
  return true;
}

/** 1-15 ASCII digits up to the closing quote, as a string. */
function digits(frame: Buffer, cursor: { at: number }): string | undefined {
  const start = cursor.at;
  let at = start;
  while (at < frame.length && frame[at]! >= 0x30 && frame[at]! <= 0x39) at++;
  const count = at - start;
  if (count === 0 || count > MAX_DIGITS || frame[at] !== QUOTE) return undefined;
  cursor.at = at;
  return frame.toString("latin1", start, at);
}

/** The frame holds exactly `text` (ASCII) at the cursor; a sid with other characters is left to the general path. */
function sameAscii(frame: Buffer, cursor: { at: number }, text: string): boolean {
  const { at } = cursor;
  if (text.length === 0 || at + text.length > frame.length) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || c === QUOTE || c === 0x5c || c < 0x20 || frame[at + i] !== c) return false;
  }
  cursor.at = at + text.length;
  return true;
}
