/**
 * The usage ledger after real calls through the Twilio stand-in: one line
 * per call, on disk when the call ends, whose figures are the call's own
 * (duration, audio out, tokens the provider reported, turns, barge-ins,
 * STT seconds within the audio sent, TTS characters of what was spoken), with
 * the configured prices' cost; the admin API lists it and exports CSV.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { speechAudio } from "../support/fake-openai-realtime-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import {
  ADMIN_TOKEN,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
let admin: TalkClient | undefined;
afterEach(async () => {
  await admin?.close();
  admin = undefined;
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);
const GREETING = "Hello, you have reached the test line.";

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function ledgerLines(dataDir: string): Record<string, unknown>[] {
  const dir = join(dataDir, "usage");
  return readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .flatMap((n) => readFileSync(join(dir, n), "utf8").split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const seconds = (a: TalkEvent, b: TalkEvent) => (Date.parse(b.timestamp) - Date.parse(a.timestamp)) / 1000;

describe("ops: the usage ledger", () => {
  it("a realtime call's line: duration, audio out, the provider's tokens, turns, and the cost from configured prices", async () => {
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: speechAudio("Sure, I can help.", "g711_ulaw") }] },
      config: {
        ops: {
          usage: {
            currency: "EUR",
            prices: { openai: { inputTokensPer1k: 1, outputTokensPer1k: 2 }, twilio: { perMinute: 0.6 } },
          },
        },
      },
    });
    const call = await h.dial();
    const sessionId = sessionOfCall(h, call.callSid)!;
    await call.sendAudio(speech, { pace: "fast" });
    await call.sendAudio(silence(1000), { pace: "fast" });
    await until(() => h!.eventsOf(sessionId, "output.audio.done").length === 1, "the answer");
    await call.stop();
    await until(() => h!.eventsOf(sessionId, "session.closed").length === 1, "the call to end");
    await h.app.gateway.app.close().catch(() => undefined); // flushes the ledger (ops closes with the server)

    const events = h.eventsOf(sessionId);
    const line = ledgerLines(h.app.config.dataDir).find((l) => l.sessionId === sessionId)!;
    expect(line).toBeDefined();
    const created = events.find((e) => e.type === "session.created")!;
    const closed = events.find((e) => e.type === "session.closed")!;
    expect(line.durationSeconds).toBeCloseTo(seconds(created, closed), 3);
    const outMs = events
      .filter((e) => e.type === "output.audio.delta")
      .reduce((sum, e) => sum + (e.payload as { durationMs: number }).durationMs, 0);
    expect(line.audioOutSeconds).toBeCloseTo(outMs / 1000, 3);
    const usage = events
      .filter((e) => e.type === "usage.metrics")
      .map((e) => e.payload as Record<string, number>);
    expect(usage.length).toBeGreaterThan(0);
    const input = usage.reduce((s, u) => s + (u.inputTokens ?? 0), 0);
    const output = usage.reduce((s, u) => s + (u.outputTokens ?? 0), 0);
    expect(line).toMatchObject({
      surface: "phone",
      carrier: "twilio",
      mode: "realtime",
      inputTokens: input,
      outputTokens: output,
      turns: events.filter((e) => e.type === "turn.started").length,
      toolCalls: 0,
      bargeIns: 0,
    });
    // The input audio the provider got: what the caller sent (speech + silence), u-law at 8 kHz.
    expect(line.audioInSeconds as number).toBeGreaterThan(0);
    expect(line.audioInSeconds as number).toBeLessThanOrEqual((speech.length + 8000) / 8000 + 0.5);
    const expected = (input / 1000) * 1 + (output / 1000) * 2 + ((line.durationSeconds as number) / 60) * 0.6;
    expect((line.cost as { total: number }).total).toBeCloseTo(expected, 5);
    expect((line.cost as { currency: string }).currency).toBe("EUR");
  });

  it("an stt-tts call's line: STT seconds within the audio sent, TTS characters of the greeting and answer", async () => {
    h = await startTelephony({ mode: "stt-tts", telephony: { greeting: GREETING } });
    const call = await h.dial();
    const sessionId = sessionOfCall(h, call.callSid)!;
    await until(() => h!.eventsOf(sessionId, "output.audio.done").length === 1, "the greeting");
    await call.sendAudio(speech, { pace: "fast" });
    await call.sendAudio(silence(1500), { pace: "fast" });
    await until(() => h!.eventsOf(sessionId, "output.audio.done").length === 2, "the answer");
    await call.stop();
    await until(() => h!.eventsOf(sessionId, "session.closed").length === 1, "the call to end");
    await h.app.gateway.app.close().catch(() => undefined);

    const events = h.eventsOf(sessionId);
    const line = ledgerLines(h.app.config.dataDir).find((l) => l.sessionId === sessionId)!;
    const sentSeconds = (speech.length + 1500 * 8) / 8000;
    expect(line.sttSeconds as number).toBeGreaterThan(0);
    expect(line.sttSeconds as number).toBeLessThanOrEqual(sentSeconds + 0.001);
    expect(line.audioInSeconds).toBe(line.sttSeconds);
    const spoken = events
      .filter((e) => e.type === "output.text.done")
      .reduce((n, e) => n + (e.payload as { text: string }).text.length, 0);
    expect(line.ttsCharacters as number).toBeGreaterThanOrEqual(GREETING.length);
    expect(line.ttsCharacters as number).toBeLessThanOrEqual(GREETING.length + spoken + 8);
    expect((line.cost as { total: number }).total).toBe(0);
  });

  it("every call of one process gets its own usage, not only the first: STT seconds, audio in, TTS characters, providers", async () => {
    h = await startTelephony({ mode: "stt-tts", telephony: { greeting: GREETING } });
    const sessions: string[] = [];
    // One after another, then two at once: each call's providers report to that call.
    const run = async (): Promise<void> => {
      const call = await h!.dial();
      const sessionId = sessionOfCall(h!, call.callSid)!;
      sessions.push(sessionId);
      await until(() => h!.eventsOf(sessionId, "output.audio.done").length === 1, "the greeting");
      await call.sendAudio(speech, { pace: "fast" });
      await call.sendAudio(silence(1500), { pace: "fast" });
      await until(() => h!.eventsOf(sessionId, "output.audio.done").length === 2, "the answer");
      await call.stop();
      await until(() => h!.eventsOf(sessionId, "session.closed").length === 1, "the call to end");
    };
    await run();
    await run();
    await Promise.all([run(), run()]);
    await h.app.gateway.app.close().catch(() => undefined);

    const lines = ledgerLines(h.app.config.dataDir);
    const sentSeconds = (speech.length + 1500 * 8) / 8000;
    for (const sessionId of sessions) {
      const line = lines.find((l) => l.sessionId === sessionId)!;
      expect(line, sessionId).toBeDefined();
      expect(line.sttSeconds as number, sessionId).toBeGreaterThan(0);
      expect(line.sttSeconds as number, sessionId).toBeLessThanOrEqual(sentSeconds + 0.001);
      expect(line.audioInSeconds, sessionId).toBe(line.sttSeconds);
      expect(line.ttsCharacters as number, sessionId).toBeGreaterThanOrEqual(GREETING.length);
      const providers = line.providers as Record<string, { sttSeconds: number; ttsCharacters: number }>;
      expect(
        Object.values(providers).some((p) => p.sttSeconds > 0),
        sessionId,
      ).toBe(true);
      expect(
        Object.values(providers).some((p) => p.ttsCharacters > 0),
        sessionId,
      ).toBe(true);
    }
  });

  it("admin.usage.list and GET /admin/usage?format=csv give the ended calls; bad dates are invalid_params", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const call = await h.dial();
    const sessionId = sessionOfCall(h, call.callSid)!;
    admin = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: ADMIN_TOKEN });
    await admin.requestUntyped("admin.session.close", { sessionId });
    await until(() => h!.eventsOf(sessionId, "session.closed").length === 1, "the call to end");
    let listed: { records: { sessionId: string }[] } = { records: [] };
    for (let i = 0; i < 50 && !listed.records.some((r) => r.sessionId === sessionId); i++) {
      listed = (await admin.requestUntyped("admin.usage.list", {})) as typeof listed;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed.records.map((r) => r.sessionId)).toContain(sessionId);
    const csv = await fetch(`${h.baseUrl}/admin/usage?format=csv`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const rows = (await csv.text()).trim().split("\r\n");
    expect(rows[0]).toMatch(/^sessionId,workerId,surface,carrier,/);
    expect(rows.some((r) => r.startsWith(`${sessionId},`))).toBe(true);
    const bad = await fetch(`${h.baseUrl}/admin/usage?from=yesterday`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(bad.status).toBe(400);
    const reversed = await fetch(`${h.baseUrl}/admin/usage?from=2026-02-02&to=2026-01-01`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(reversed.status).toBe(400);
  });
});
