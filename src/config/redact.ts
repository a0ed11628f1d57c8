/**
 * Secret redaction for anything that echoes configuration (talk.config for
 * non-admin callers, start-up logs, doctor output). A key is secret by name;
 * URLs lose their password.
 */

export const REDACTED = "[redacted]";

const SECRET_KEY = /(api[-_]?key|token|secret|password|passwd|auth[-_]?token|credential|private[-_]?key)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

function redactUrlPassword(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) return value;
  try {
    const url = new URL(value);
    if (url.password) url.password = REDACTED;
    return url.toString();
  } catch {
    return value;
  }
}

/** Deep copy of `value` with secrets replaced by "[redacted]". */
export function redactSecrets<T>(value: T): T {
  return walk(value) as T;
}

function walk(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, k);
    return out;
  }
  if (typeof value === "string") {
    if (key !== undefined && isSecretKey(key)) return REDACTED;
    return redactUrlPassword(value);
  }
  return value;
}
