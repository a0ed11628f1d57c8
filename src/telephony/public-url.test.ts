import { describe, expect, it } from "vitest";
import { isLoopbackAddress, parsePublicUrl, signedWebhookUrl, streamUrlFor } from "./public-url.js";

describe("public URLs", () => {
  it("builds the signed webhook URL from PUBLIC_URL and the request path with its query", () => {
    expect(signedWebhookUrl("https://talk.example.org/", "/telephony/carrier/voice?x=1")).toBe(
      "https://talk.example.org/telephony/carrier/voice?x=1",
    );
    expect(signedWebhookUrl("https://example.org/base", "/telephony/carrier/voice")).toBe(
      "https://example.org/base/telephony/carrier/voice",
    );
  });

  it("turns https into wss and http into ws for the stream URL", () => {
    expect(streamUrlFor("https://talk.example.org", "/telephony/carrier/stream")).toBe(
      "wss://talk.example.org/telephony/carrier/stream",
    );
    expect(streamUrlFor("http://127.0.0.1:8787/", "/telephony/carrier/stream")).toBe(
      "ws://127.0.0.1:8787/telephony/carrier/stream",
    );
  });

  it("rejects a PUBLIC_URL that is not absolute http(s) without query", () => {
    expect(() => parsePublicUrl("talk.example.org")).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => parsePublicUrl("ftp://talk.example.org")).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => parsePublicUrl("https://talk.example.org/?a=1")).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});

describe("loopback peers", () => {
  it("counts 127.0.0.0/8, ::1 and IPv4-mapped loopback as loopback, nothing else", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"])
      expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ["10.0.0.1", "::ffff:10.0.0.1", "", undefined]) expect(isLoopbackAddress(a)).toBe(false);
  });
});
