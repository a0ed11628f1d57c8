/**
 * The process's logger: pino, structured, with every line through the one
 * redaction (src/config/redact.ts) — objects by key name, URLs in any string
 * without credentials or query, errors' messages and stacks too — so no
 * surface or provider has to remember to keep a key out of a log line.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import type { TalkgateConfig } from "../config/index.js";
import { redactSecrets, redactText } from "../config/index.js";

export function createAppLogger(
  level: TalkgateConfig["log"]["level"],
  destination?: DestinationStream,
  mixin?: pino.LoggerOptions["mixin"],
): Logger {
  const options: pino.LoggerOptions = {
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
  return destination ? pino(options, destination) : pino(options);
}
