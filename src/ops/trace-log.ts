/**
 * Trace ids in log lines. Each traced session's ids, by session id, for as
 * long as the session runs (and a few seconds after): the process's pino
 * logger is built with `traceLogMixin`, so every line that names a
 * `sessionId` (or the call's `callSid` / `callId`, the bot's `botId`, which the surfaces
 * log by) also carries `traceId` and `spanId` (the session's root span),
 * and a log search finds the trace of the work a line belongs to. One map per
 * process, like OpenTelemetry's own global context: session ids are unique.
 */
export const traceIds = new Map<string, { traceId: string; spanId: string }>();

/** pino's `mixin`: `{traceId, spanId}` for a line whose fields name a traced session, else nothing. */
export function traceLogMixin(fields: object): Record<string, string> {
  const f = fields as { sessionId?: unknown; callSid?: unknown; callId?: unknown; botId?: unknown };
  for (const key of [f.sessionId, f.callSid, f.callId, f.botId]) {
    if (typeof key !== "string") continue;
    const ids = traceIds.get(key);
    if (ids) return ids;
  }
  return {};
}
