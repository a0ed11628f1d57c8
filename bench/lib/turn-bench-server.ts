/**
 * The talkgate server of the turn-taking bench, as its own process (its own
 * event loop, so the caller side's 20 ms pacing and the server's playout do
 * not wait on each other): the whole app in stt-tts mode with Twilio
 * configured as in the telephony tests (test/support/telephony-harness.ts),
 * the corpus answer as the greeting, and --config-json's `talk` / `telephony`
 * merged in. Prints `{"ready":true,"port":N,"publicUrl":U}` when listening;
 * sends over IPC, as they happen, the events the figures need, stamped on the
 * shared clock (performance.timeOrigin + performance.now(), ms since the epoch)
 * with the call's CallSid.
 *
 *   node --import tsx bench/lib/turn-bench-server.ts --config-json '{"talk":{...},"telephony":{...}}'
 */
import { parseArgs } from "node:util";
import { startTelephony } from "../../test/support/telephony-harness.js";

const { values } = parseArgs({ options: { "config-json": { type: "string", default: "{}" } } });
const config = JSON.parse(values["config-json"]) as {
  talk?: Record<string, unknown>;
  telephony?: Record<string, unknown>;
};

const FORWARDED = new Set([
  "input.audio.committed",
  "turn.cancelled",
  "output.audio.done",
  "output.audio.cancelled",
  "output.audio.resumed",
]);

const h = await startTelephony({
  mode: "stt-tts",
  telephony: config.telephony ?? {},
  talk: config.talk ?? {},
});
const callSids = new Map<string, string>();
h.app.runtime.subscribeAll((e) => {
  if (!FORWARDED.has(e.type)) return;
  let callSid = callSids.get(e.sessionId);
  if (callSid === undefined) {
    const found = h.app.runtime.listSessions().find((s) => s.id === e.sessionId)?.metadata["callSid"];
    if (typeof found !== "string") return;
    callSids.set(e.sessionId, (callSid = found));
  }
  process.send?.({ callSid, type: e.type, at: performance.timeOrigin + performance.now() });
});
process.stdout.write(`${JSON.stringify({ ready: true, port: h.port, publicUrl: h.publicUrl })}\n`);

const stop = (): void => {
  void h.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
