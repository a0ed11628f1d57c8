import { describe, expect, it } from "vitest";
import { CarrierMessageBuilder } from "./carrier-messages.js";
import { parseTwilioMessage } from "./media-stream-messages.js";

const identity = { streamSid: "MZ0001", callSid: "CA0001", accountSid: "AC0001" };

function parsed(message: Record<string, unknown>) {
  const result = parseTwilioMessage(JSON.stringify(message), { expectedStreamSid: identity.streamSid });
  if (!result.ok) throw result.error;
  return result.message;
}

describe("CarrierMessageBuilder", () => {
  it("builds every message Twilio sends in a shape our stream parser accepts", () => {
    const b = new CarrierMessageBuilder(identity);
    expect(parsed(b.connected()).event).toBe("connected");
    expect(parsed(b.start({ token: "t1" }))).toMatchObject({ event: "start" });
    expect(parsed(b.media(new Uint8Array(160).fill(0xff)))).toMatchObject({ event: "media" });
    expect(parsed(b.dtmf("5"))).toMatchObject({ event: "dtmf" });
    expect(parsed(b.mark("m1"))).toMatchObject({ event: "mark" });
    expect(parsed(b.stop())).toMatchObject({ event: "stop" });
  });

  it("numbers messages over the whole stream and media chunks on their own, 20 ms apart", () => {
    const b = new CarrierMessageBuilder(identity);
    b.start({});
    const first = b.media(new Uint8Array(160)) as {
      sequenceNumber: string;
      media: { chunk: string; timestamp: string };
    };
    b.mark("m");
    const second = b.media(new Uint8Array(160)) as typeof first;
    expect([first.sequenceNumber, second.sequenceNumber]).toEqual(["2", "4"]);
    expect([first.media.chunk, second.media.chunk]).toEqual(["1", "2"]);
    expect([first.media.timestamp, second.media.timestamp]).toEqual(["20", "40"]);
  });

  it("encodes only the frame's own bytes when it is a view into a larger buffer", () => {
    const whole = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const msg = new CarrierMessageBuilder(identity).media(whole.subarray(2, 4)) as {
      media: { payload: string };
    };
    expect([...Buffer.from(msg.media.payload, "base64")]).toEqual([3, 4]);
  });
});
