/**
 * What every carrier's test harness starts the server with, written once:
 * the realtime stand-in (realtime calls only) with the `talk` config pointing
 * at it, and a logger whose lines the test can read back.
 */
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { traceLogMixin } from "../../src/ops/index.js";
import {
  FakeOpenAiRealtimeServer,
  type FakeOpenAiRealtimeServerOptions,
} from "./fake-openai-realtime-server.js";

/** The realtime stand-in's API key in every harness. */
export const REALTIME_KEY = "sk-test-realtime";

/** The stand-in for a realtime call (none for stt-tts) and the `talk` config section that points at it. */
export async function realtimeStandIn(
  mode: "realtime" | "stt-tts",
  options: FakeOpenAiRealtimeServerOptions | undefined,
): Promise<{ realtime: FakeOpenAiRealtimeServer | undefined; talk: Record<string, unknown> }> {
  if (mode !== "realtime") return { realtime: undefined, talk: {} };
  const realtime = new FakeOpenAiRealtimeServer({ apiKey: REALTIME_KEY, ...options });
  const url = await realtime.start();
  const talk = {
    realtime: {
      provider: "openai",
      providers: {
        openai: { apiKey: REALTIME_KEY, baseUrl: url.replace(/^ws/, "http").replace(/\/realtime$/, "") },
      },
    },
  };
  return { realtime, talk };
}

/** A logger like the app's own (lines naming a traced session carry its trace ids), kept in `logs`. */
export function capturedLogger(): { logger: Logger; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info", mixin: traceLogMixin },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n"))
          if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, logs };
}
