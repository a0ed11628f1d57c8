import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { resolveSessionShape } from "./session-shape.js";

describe("resolveSessionShape", () => {
  it("without config keeps the built-ins: realtime, the only Gateway transport, agent-consult", () => {
    expect(resolveSessionShape({}, {}, "gateway")).toEqual({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
    });
    expect(resolveSessionShape({ transport: "managed-room" }, {}, "gateway")).toMatchObject({
      mode: "stt-tts",
      brain: "agent-consult",
    });
  });

  it("uses a configured default only where the method can create it", () => {
    const configured = { mode: "realtime", transport: "webrtc", brain: "direct-tools" } as const;
    // webrtc is client-owned and direct-tools is no realtime brain: the Gateway shape ignores both.
    expect(resolveSessionShape({}, configured, "gateway")).toEqual({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
    });
    expect(resolveSessionShape({}, configured, "client")).toMatchObject({ transport: "webrtc" });
    expect(resolveSessionShape({ mode: "stt-tts" }, configured, "gateway")).toMatchObject({
      transport: "managed-room",
      brain: "direct-tools",
    });
  });

  it("never replaces a requested field, so the caller's checks still see a bad combination", () => {
    expect(resolveSessionShape({ transport: "webrtc" }, { mode: "transcription" }, "gateway")).toMatchObject({
      transport: "webrtc",
    });
  });

  it("a client session with no transport given or configured is invalid_params naming transport", () => {
    let caught: unknown;
    try {
      resolveSessionShape({}, {}, "client");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TalkError);
    expect((caught as TalkError).code).toBe("invalid_params");
  });
});
