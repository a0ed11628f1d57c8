import { describe, expect, it } from "vitest";
import { connectStreamTexml } from "./texml.js";

describe("TeXML answer", () => {
  it("connects the call to a bidirectional RTP PCMU stream, asking for the caller's audio in PCMU, with the parameters", () => {
    const xml = connectStreamTexml({
      url: "wss://talkgate.example/telephony/telnyx/stream",
      parameters: { token: "t1abc", callId: "v3:xyz", from: "+15557654321" },
    });
    expect(xml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>' +
        '<Stream url="wss://talkgate.example/telephony/telnyx/stream" codec="PCMU" bidirectionalMode="rtp" bidirectionalCodec="PCMU">' +
        '<Parameter name="token" value="t1abc"/><Parameter name="callId" value="v3:xyz"/>' +
        '<Parameter name="from" value="+15557654321"/></Stream></Connect></Response>',
    );
  });

  it("escapes attribute values and drops characters XML cannot carry", () => {
    const xml = connectStreamTexml({
      url: "wss://h/s?a=1&b=2",
      parameters: { from: `"Bob" <b&b> 'x'\u0001` },
    });
    expect(xml).toContain('url="wss://h/s?a=1&amp;b=2"');
    expect(xml).toContain('value="&quot;Bob&quot; &lt;b&amp;b&gt; &apos;x&apos;"');
  });
});
