/**
 * An operator ends a live phone call through the admin API: the call is
 * listed with its carrier and numbers, and closing it hangs it up at the
 * carrier (the Twilio REST stand-in sees Status=completed) and closes the
 * carrier's media socket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import {
  ADMIN_TOKEN,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
let client: TalkClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  await h?.close();
  h = undefined;
});

describe("ops: an operator's hang-up", () => {
  it("a live call is listed with carrier and numbers, and admin.session.close hangs it up at the carrier and closes the stream", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const call = await h.dial({ from: "+15557654321", to: "+15550001111" });
    const sessionId = sessionOfCall(h, call.callSid)!;
    client = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: ADMIN_TOKEN });

    const { sessions } = (await client.requestUntyped("admin.sessions.list", {})) as {
      sessions: Record<string, unknown>[];
    };
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      sessionId,
      surface: "phone",
      carrier: "twilio",
      mode: "stt-tts",
      state: "active",
      counterpart: { from: "+15557654321", to: "+15550001111", direction: "inbound", callSid: call.callSid },
    });

    const closed = await client.requestUntyped("admin.session.close", { sessionId });
    expect(closed).toEqual({ sessionId, closed: true, hungUp: true });
    await call.waitFor(() => call.closeCode !== undefined);
    const hangUp = h.rest.requests.find((r) => r.path.endsWith(`/Calls/${call.callSid}.json`));
    expect(hangUp?.params.get("Status")).toBe("completed");
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(1);
    const { sessions: after } = (await client.requestUntyped("admin.sessions.list", {})) as {
      sessions: unknown[];
    };
    expect(after).toEqual([]);
  });
});
