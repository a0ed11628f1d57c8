/**
 * Any worker may take a Vonage stream: two workers on one Redis, the answer
 * webhook on one and the WebSocket on the other (as a front door that
 * balances them independently would send them). The token is verified by
 * the second worker and spent once cluster-wide; the call runs where its
 * stream landed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { endpointOf, startVonage, waitUntil, type VonageHarness } from "../support/vonage-harness.js";
import { loadSpeechPcm16k } from "../support/vonage-stream-client.js";

const prefix = uniquePrefix("vonage-workers");
let a: VonageHarness;
let b: VonageHarness;
beforeAll(async () => {
  const config = { redis: { url: SHARED_REDIS_URL, keyPrefix: prefix } };
  a = await startVonage({ mode: "stt-tts", config });
  b = await startVonage({ mode: "stt-tts", config });
});
afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("telephony: a Vonage stream on another worker than its webhook", () => {
  it("the call runs on the stream's worker with audio both ways; the token cannot be spent again on either", async () => {
    const uuid = crypto.randomUUID();
    const res = await a.answer({ to: "447700900000", from: "447700900123", uuid });
    expect(res.status).toBe(200);
    const headers = endpointOf(await res.json()).headers;
    const client = await b.connect(headers);
    await waitUntil(() => b.sessionOf(uuid) !== undefined);
    expect(a.sessionOf(uuid)).toBeUndefined();
    const sessionId = b.sessionOf(uuid)!;
    await client.sendAudio(new Uint8Array(32 * 300), { pace: "fast" });
    await client.sendAudio(loadSpeechPcm16k(), { pace: "fast" });
    await client.sendAudio(new Uint8Array(32 * 1500), { pace: "fast" });
    await waitUntil(() => b.eventsOf(sessionId, "output.audio.done").length === 1, 30_000);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.frames.every((f) => f.byteLength === 640)).toBe(true);
    for (const worker of [a, b]) {
      const again = await worker.connect(headers);
      await again.waitFor(() => again.closeCode !== undefined);
      expect(again.closeCode).toBe(1008);
    }
    await client.hangUp();
    await waitUntil(() => b.eventsOf(sessionId, "session.closed").length === 1);
  });
});
