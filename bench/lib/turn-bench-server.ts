/**
 * The talkgate server of the turn-taking bench, as its own process (its own
 * event loop, so the caller side's 20 ms pacing and the server's playout do
 * not wait on each other): the whole app in stt-tts mode with Twilio
 * configured as in the telephony tests (test/support/telephony-harness.ts),
 * the corpus answer as the greeting, and --config-json's `talk` / `telephony`
 * merged in; with `"mode":"realtime"` the answer is the OpenAI Realtime
 * stand-in's instead (the greeting's text synthesized by espeak-ng, in the
 * format the leg asks for: u-law passed through, or PCM 24 kHz when the leg
 * decodes). Prints `{"ready":true,"port":N,"publicUrl":U}` when listening;
 * sends over IPC, as they happen, the events the figures need, stamped on the
 * shared clock (performance.timeOrigin + performance.now(), ms since the epoch)
 * with the call's CallSid.
 *
 *   node --import tsx bench/lib/turn-bench-server.ts --config-json '{"talk":{...},"telephony":{...}}'
 *
 * With `"agentFirstTokenMs":N` (stt-tts) the agent is a chat completions stand-in with that time to first
 * token instead of the local rule-based agent, which answers at once.
 */
import { parseArgs } from "node:util";
import { execFileSync } from "node:child_process";
import { startTelephony } from "../../test/support/telephony-harness.js";
import { FakeChatCompletionsServer } from "../../test/support/fake-chat-completions-server.js";

const { values } = parseArgs({ options: { "config-json": { type: "string", default: "{}" } } });
const config = JSON.parse(values["config-json"]) as {
  mode?: "stt-tts" | "realtime";
  /** stt-tts: the agent is a chat completions stand-in that waits this long before its first token, ms. */
  agentFirstTokenMs?: number;
  talk?: Record<string, unknown>;
  telephony?: Record<string, unknown>;
};
const mode = config.mode ?? "stt-tts";

const FORWARDED = new Set([
  "input.audio.committed",
  // The end of a caller's turn on the realtime relay, where no audio is committed here (turn-call.ts).
  "turn.ended",
  "turn.cancelled",
  "output.audio.done",
  "output.audio.cancelled",
  "output.audio.resumed",
  // For --details (what the recognizer heard and when the gate saw speech start and stop).
  "input.audio.speech_started",
  "input.audio.speech_stopped",
  "transcript.delta",
  "transcript.done",
]);

/**
 * A model's time to first token, stood in for (--agent-first-token-ms): a chat completions server whose
 * every answer is one short sentence, its first token after that delay, the rest at 20 ms a token.
 */
const agentStandIn =
  mode === "stt-tts" && config.agentFirstTokenMs !== undefined
    ? new FakeChatCompletionsServer({
        apiKey: undefined,
        answer: "All right, I can help you with that.",
        firstTokenDelayMs: config.agentFirstTokenMs,
        tokenDelayMs: 20,
      })
    : undefined;
const agentUrl = await agentStandIn?.start();

const h = await startTelephony({
  mode,
  telephony: config.telephony ?? {},
  talk: config.talk ?? {},
  ...(agentUrl
    ? { config: { agent: { endpoint: { baseUrl: agentUrl, model: "stand-in" }, progressCueMs: 0 } } }
    : {}),
  ...(mode === "realtime" ? { realtime: { replies: realtimeReplies() } } : {}),
});

/** Every response of the stand-in is the corpus answer (the greeting, and the answers after a turn). */
function realtimeReplies(): { audio: Uint8Array; transcript: string }[] {
  const input = (config.talk?.["input"] ?? {}) as {
    echoCancellation?: { realtime?: boolean };
    turnEnd?: string;
  };
  const pcm = input.echoCancellation?.realtime === true || input.turnEnd === "talkgate";
  const text = String(config.telephony?.["greeting"] ?? "Hello.");
  const wav = execFileSync("espeak-ng", ["--stdout", text], { maxBuffer: 64 << 20 });
  const out = pcm ? ["-ar", "24000", "-f", "s16le"] : ["-ar", "8000", "-f", "mulaw"];
  // The corpus answer is long: more than execFileSync's default 1 MiB of PCM at 24 kHz.
  const audio = new Uint8Array(
    execFileSync("ffmpeg", ["-v", "error", "-i", "pipe:0", "-ac", "1", ...out, "pipe:1"], {
      input: wav,
      maxBuffer: 64 << 20,
    }),
  );
  return Array.from({ length: 2000 }, () => ({ audio, transcript: text }));
}
const callSids = new Map<string, string>();
h.app.runtime.subscribeAll((e) => {
  if (!FORWARDED.has(e.type)) return;
  let callSid = callSids.get(e.sessionId);
  if (callSid === undefined) {
    const found = h.app.runtime.listSessions().find((s) => s.id === e.sessionId)?.metadata["callSid"];
    if (typeof found !== "string") return;
    callSids.set(e.sessionId, (callSid = found));
  }
  const payload = e.payload as
    { role?: string; text?: unknown; replace?: unknown; endpointMs?: unknown; reason?: unknown } | undefined;
  if (e.type.startsWith("transcript.") && payload?.role !== "user") return;
  process.send?.({
    callSid,
    type: e.type,
    at: performance.timeOrigin + performance.now(),
    ...(typeof payload?.text === "string" ? { text: payload.text } : {}),
    // A delta's text replaces the running transcript rather than extending it (stt-capture PartialTracker).
    ...(e.type === "transcript.delta" && payload?.replace === true ? { replace: true } : {}),
    ...(typeof payload?.endpointMs === "number" ? { endpointMs: payload.endpointMs } : {}),
    ...(e.type === "output.audio.resumed" && typeof payload?.reason === "string"
      ? { reason: payload.reason }
      : {}),
  });
});
process.stdout.write(`${JSON.stringify({ ready: true, port: h.port, publicUrl: h.publicUrl })}\n`);

const stop = (): void => {
  // Consults asked for and closed before their end (a prepared answer the caller's next words made moot).
  if (agentStandIn) {
    // Each session's "answers prepared ahead of the end of turn" line (stt-tts-pipeline.ts), summed.
    const prepared = { prepared: 0, used: 0, discarded: {} as Record<string, number> };
    for (const line of h.logs) {
      const p = line["preparedAnswers"] as typeof prepared | undefined;
      if (!p) continue;
      prepared.prepared += p.prepared;
      prepared.used += p.used;
      for (const [why, n] of Object.entries(p.discarded))
        prepared.discarded[why] = (prepared.discarded[why] ?? 0) + n;
    }
    console.error(
      `agent stand-in (${JSON.stringify(config.talk?.["input"] ?? {})}): ${agentStandIn.requests.length} consults, ${agentStandIn.disconnects} closed before their end; prepared ahead of the end of turn ${JSON.stringify(prepared)}`,
    );
  }
  void h
    .close()
    .then(() => agentStandIn?.close())
    .finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
