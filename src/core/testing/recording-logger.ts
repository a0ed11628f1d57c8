import type { TalkLogger } from "../logger.js";

/** A logger for tests that keeps the message of every warning, so a test can see bad input was reported, not thrown. */
export function recordingLogger(): TalkLogger & { warnings: string[] } {
  const warnings: string[] = [];
  const noop = (): void => {};
  return {
    warnings,
    debug: noop,
    info: noop,
    error: noop,
    warn: (obj: unknown, msg?: string) => warnings.push(typeof obj === "string" ? obj : (msg ?? "")),
  };
}
