/**
 * The process's logger: pino, structured, with every line through the one
 * redaction (src/config/redact.ts) — objects by key name, URLs in any string
 * without credentials or query, errors' messages and stacks too — so no
 * surface or provider has to remember to keep a key out of a log line.
 *
 * Lines are JSON for machines, or readable for a person (pino-pretty: time,
 * level, message, then the fields on one line): `log.format` ("auto" by
 * default: readable when standard output is a terminal, JSON otherwise; env
 * LOG_FORMAT). The redaction runs before either.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import { build as prettyStream } from "pino-pretty";
import type { TalkgateConfig } from "../config/index.js";
import { redactSecrets, redactText } from "../config/index.js";

export type LogFormat = TalkgateConfig["log"]["format"];

export interface AppLoggerOptions {
  level: TalkgateConfig["log"]["level"];
  /** "json", "pretty", or "auto" (pretty when `isTerminal`). Default "json". */
  format?: LogFormat;
  /** Where lines go. Default standard output. */
  destination?: DestinationStream;
  /** Whether the destination is a terminal, for "auto". Default: whether standard output is one. */
  isTerminal?: boolean;
  mixin?: pino.LoggerOptions["mixin"];
}

/** Whether `format` comes out as readable lines. */
export function prettyLogs(format: LogFormat, isTerminal: boolean): boolean {
  return format === "pretty" || (format === "auto" && isTerminal);
}

export function createAppLogger(options: AppLoggerOptions): Logger {
  const { level, mixin } = options;
  const pinoOptions: pino.LoggerOptions = {
    level,
    base: { service: "talkgate" },
    ...(mixin ? { mixin } : {}),
    formatters: { log: (object) => redactSecrets(object) },
    hooks: {
      logMethod(args, method) {
        const redacted = args.map((a: unknown) => (typeof a === "string" ? redactText(a) : a));
        method.apply(this, redacted as Parameters<typeof method>);
      },
    },
  };
  const isTerminal = options.isTerminal ?? process.stdout.isTTY === true;
  if (prettyLogs(options.format ?? "json", isTerminal)) {
    const pretty = prettyStream({
      // Synchronous like pino's own default destination: the last lines before process.exit are written.
      sync: true,
      colorize: isTerminal,
      translateTime: "SYS:HH:MM:ss.l",
      // `urls` repeats what the listening line's message says.
      ignore: "pid,hostname,service,urls",
      singleLine: true,
      ...(options.destination ? { destination: options.destination } : {}),
    });
    return pino(pinoOptions, pretty);
  }
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}
