/**
 * A call's stream follows its session: whatever closes the session (the
 * runtime, the cluster taking the lease away) closes the media leg, and the
 * leg closes the carrier's socket, so a caller never sits on a stream whose
 * session is gone.
 */
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
let prefix: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (prefix) await deleteKeys(SHARED_REDIS_URL, prefix);
  prefix = undefined;
});

describe("telephony: the stream follows its session", () => {
  it("a session closed by the runtime closes the carrier socket with the session's reason", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await h.app.runtime.getSession(sessionId)!.close("timeout");
    await client.waitFor(() => client.closeCode !== undefined);
    expect(client.closeCode).toBe(1000);
    expect(client.closeReason).toBe("timeout");
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(1);
  });

  it("a session whose lease the cluster takes away (owner_lost) closes the carrier socket", async () => {
    prefix = uniquePrefix("tel-lease");
    h = await startTelephony({
      mode: "stt-tts",
      config: { redis: { url: SHARED_REDIS_URL, keyPrefix: prefix }, cluster: { leaseTtlSec: 1 } },
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    const redis = new Redis(SHARED_REDIS_URL);
    try {
      const lease = `${prefix}lease:${sessionId}`;
      await waitUntil(async () => (await redis.exists(lease)) === 1);
      // Another worker's write wins the key: this worker's next renewal finds the lease is not its own.
      await redis.set(lease, "another-worker", "EX", 30);
      await client.waitFor(() => client.closeCode !== undefined);
    } finally {
      redis.disconnect();
    }
    expect(client.closeReason).toBe("owner_lost");
    const closed = h.eventsOf(sessionId, "session.closed");
    expect(closed).toHaveLength(1);
    expect(closed[0]!.payload).toMatchObject({ reason: "owner_lost" });
  });
});

async function waitUntil(predicate: () => Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((r) => setTimeout(r, 20));
}
