/**
 * Traces of a real call exported to a local OTLP/HTTP receiver, configured
 * only by the standard OTEL_* variables: one trace per call with the
 * expected tree (call -> turn -> stt / agent / tts), the worker as
 * service.instance.id, and the call's log lines carrying its trace id.
 * Without an OTEL exporter variable nothing is exported.
 */
import { afterEach, describe, expect, it } from "vitest";
import { OtlpReceiver } from "../support/otlp-receiver.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

const OTEL_VARS = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_BSP_SCHEDULE_DELAY"];
let h: TelephonyHarness | undefined;
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await receiver?.close();
  receiver = undefined;
  for (const name of OTEL_VARS) delete process.env[name];
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

async function placeCall(harness: TelephonyHarness): Promise<string> {
  const client = await harness.dial({ playback: "manual" });
  const sessionId = sessionOfCall(harness, client.callSid)!;
  await client.sendAudio(speech, { pace: "fast" });
  await client.sendAudio(silence(1500), { pace: "fast" });
  client.play(600_000);
  const deadline = Date.now() + 30_000;
  while (harness.eventsOf(sessionId, "output.audio.delta").length === 0) {
    if (Date.now() > deadline) throw new Error("no answer");
    await new Promise((r) => setTimeout(r, 20));
  }
  await client.stop();
  while (harness.eventsOf(sessionId, "session.closed").length === 0)
    await new Promise((r) => setTimeout(r, 20));
  return sessionId;
}

describe("ops: OpenTelemetry traces", () => {
  it("a call's span tree reaches the OTLP/HTTP receiver named by OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, and its log lines carry the trace id", async () => {
    receiver = new OtlpReceiver();
    const url = await receiver.start();
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${url}/v1/traces`;
    process.env.OTEL_SERVICE_NAME = "talkgate-test";
    process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
    h = await startTelephony({ mode: "stt-tts" });
    const sessionId = await placeCall(h);
    const logs = h.logs;
    await h.close();
    h = undefined;

    const spans = receiver.spans;
    expect(receiver.contentTypes.every((t) => t.startsWith("application/json"))).toBe(true);
    const root = spans.find(
      (s) => s.name === "talkgate.call" && s.attributes["talkgate.session_id"] === sessionId,
    );
    expect(root).toBeDefined();
    expect(root!.parentSpanId).toBeUndefined();
    expect(root!.attributes).toMatchObject({ "talkgate.surface": "phone", "talkgate.carrier": "twilio" });
    expect(root!.resource).toMatchObject({ "service.name": "talkgate-test" });
    expect(root!.resource["service.instance.id"]).toBeTruthy();
    const ofTrace = spans.filter((s) => s.traceId === root!.traceId);
    const turns = ofTrace.filter((s) => s.name === "talkgate.turn");
    expect(turns.length).toBeGreaterThanOrEqual(1);
    for (const turn of turns) expect(turn.parentSpanId).toBe(root!.spanId);
    const turnIds = new Set(turns.map((t) => t.spanId));
    for (const kind of ["stt", "agent", "tts"]) {
      const work = ofTrace.filter((s) => s.name === `talkgate.${kind}`);
      expect(work.length, kind).toBeGreaterThanOrEqual(1);
      for (const span of work) expect(turnIds.has(span.parentSpanId!), `${kind} under a turn`).toBe(true);
    }
    expect(ofTrace.find((s) => s.name === "talkgate.tts")!.events).toContain("first_audio");
    expect(
      ofTrace.find((s) => s.name === "talkgate.tts")!.attributes["talkgate.tts.characters"],
    ).toBeGreaterThan(0);

    const callSid = root!.attributes["talkgate.call_sid"];
    const lines = logs.filter(
      (l) => l.sessionId === sessionId || l.callSid === callSid || l.callId === callSid,
    );
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.traceId === root!.traceId)).toBe(true);
    // Every line of the call logged while it ran carries the same trace.
    expect(lines.filter((l) => l.traceId !== undefined).every((l) => l.traceId === root!.traceId)).toBe(true);
  });

  it("exports nothing without an OTEL exporter variable", async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    h = await startTelephony({ mode: "stt-tts" });
    const sessionId = await placeCall(h);
    const logs = h.logs;
    await h.close();
    h = undefined;
    expect(receiver.spans).toEqual([]);
    expect(logs.filter((l) => l.sessionId === sessionId && l.traceId !== undefined)).toEqual([]);
    expect(logs.some((l) => l.msg === "tracing on")).toBe(false);
  });
});
