/**
 * Capture of the client messages the realtime providers' stand-ins receive,
 * for the type check against the vendors' SDKs (test/wire/, run at the end of
 * every `vitest run`). With TALKGATE_WIRE_CAPTURE_DIR set (the suite's global
 * setup sets it), each message is written once per process, as it was sent
 * but with long strings (base64 audio, long instructions) shortened: a
 * string's type is all the check looks at, and the shortening is what lets
 * a call's thousands of audio appends collapse into one entry.
 *
 * Test-only; not part of the product.
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";

/** Whose message: the realtime sockets' client messages, and the token endpoints' request bodies. */
export type WireVendor = "openai" | "xai" | "gemini" | "openai-client-secret" | "xai-client-secret";

export const WIRE_CAPTURE_ENV = "TALKGATE_WIRE_CAPTURE_DIR";

/** A captured message and where it was first seen. */
export interface CapturedMessage {
  vendor: WireVendor;
  message: unknown;
  /** The test file (relative) and test that sent it first in this process. */
  origin: string;
}

const LONG = 64;
const seen = new Set<string>();

/** Records one client message a stand-in received; nothing unless the capture is on. */
export function recordClientMessage(vendor: WireVendor, message: unknown): void {
  const dir = process.env[WIRE_CAPTURE_ENV];
  if (!dir) return;
  const normalized = normalize(message);
  const key = `${vendor} ${JSON.stringify(normalized)}`;
  if (seen.has(key)) return;
  seen.add(key);
  const captured: CapturedMessage = { vendor, message: normalized, origin: origin() };
  appendFileSync(join(dir, `${vendor}-${process.pid}.jsonl`), `${JSON.stringify(captured)}\n`);
}

/** The message with every string longer than 64 characters replaced by a short one (its type unchanged). */
export function normalize(value: unknown): unknown {
  if (typeof value === "string") return value.length > LONG ? `<${value.length} characters>` : value;
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  return value;
}

/** The running test, as vitest's worker names it (absent outside a test). */
function origin(): string {
  const state = (globalThis as { __vitest_worker__?: { filepath?: string; current?: { name?: string } } })
    .__vitest_worker__;
  const file = state?.filepath?.replace(process.cwd() + "/", "") ?? "?";
  return state?.current?.name ? `${file} > ${state.current.name}` : file;
}
