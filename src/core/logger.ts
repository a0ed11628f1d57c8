/**
 * The narrow logger core accepts. pino's logger satisfies it structurally, so
 * core never imports pino; tests and embedders can pass anything with these
 * four methods.
 */
export interface TalkLogger {
  debug(obj: Record<string, unknown> | string, msg?: string): void;
  info(obj: Record<string, unknown> | string, msg?: string): void;
  warn(obj: Record<string, unknown> | string, msg?: string): void;
  error(obj: Record<string, unknown> | string, msg?: string): void;
}

const noop = (): void => {};

export const NOOP_LOGGER: TalkLogger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });
