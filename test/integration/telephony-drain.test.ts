/**
 * A draining worker takes no new calls: the voice webhook answers 503 (the
 * carrier then requests the number's fallback URL), new media streams are
 * refused with 1013, /readyz is 503, and the call already running goes on
 * until it ends, which ends the drain.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";
import {
  ACCOUNT_SID,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("telephony: a draining worker", () => {
  it("answers the voice webhook 503 with no token, refuses new streams, and lets the running call finish", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const running = await h.dial();
    const sessionId = sessionOfCall(h, running.callSid)!;

    const drained = h.app.cluster.drain();
    const res = await h.webhook({
      CallSid: `CA${"b2".repeat(16)}`,
      AccountSid: ACCOUNT_SID,
      From: "+15557654321",
      To: "+15550001111",
      Direction: "inbound",
    });
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(body).not.toContain("<Stream");
    expect(body).not.toContain("token");

    const fresh = new TwilioStreamClient({
      url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
      callSid: `CA${"c3".repeat(16)}`,
      accountSid: ACCOUNT_SID,
    });
    await fresh.connect().catch(() => undefined);
    await fresh.waitFor(() => fresh.closeCode !== undefined);
    expect(fresh.closeCode).toBe(1013);
    expect(fresh.closeReason).toBe("draining");

    expect((await fetch(`${h.baseUrl}/readyz`)).status).toBe(503);
    // The running call is untouched by the drain, and its end ends the drain.
    expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");
    expect(running.closeCode).toBeUndefined();
    await running.stop();
    await expect(drained).resolves.toMatchObject({ drained: true, remaining: 0 });
  });
});
