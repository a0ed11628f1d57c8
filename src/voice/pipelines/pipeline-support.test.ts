import { afterEach, describe, expect, it } from "vitest";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { PCM16_16K, ULAW_8K } from "../../core/talk-types.js";
import { checkAppend, checkAppendPcm } from "./pipeline-support.js";

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function session() {
  runtime = createTalkRuntime();
  return runtime.createSession({
    mode: "transcription",
    transport: "gateway-relay",
    brain: "none",
    owner: "gateway",
  });
}

const STEREO_16K = { encoding: "pcm16", sampleRate: 16_000, channels: 2 } as const;

describe("input frame checks", () => {
  it("appendPcm takes whole samples of every channel and says nothing of an empty frame", () => {
    const s = session();
    expect(checkAppendPcm(s, new Int16Array(320), PCM16_16K, 65_536)).toBe(true);
    expect(checkAppendPcm(s, new Int16Array(0), PCM16_16K, 65_536)).toBe(false);
    expect(checkAppendPcm(s, new Int16Array(4), STEREO_16K, 65_536)).toBe(true);
  });

  it("appendPcm refuses bytes, an encoded session, half a stereo frame and an oversized frame, each by code", () => {
    const s = session();
    expect(() => checkAppendPcm(s, new Uint8Array(4), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => checkAppendPcm(s, new Int16Array(160), ULAW_8K, 65_536)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => checkAppendPcm(s, new Int16Array(3), STEREO_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => checkAppendPcm(s, new Int16Array(40_000), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "payload_too_large" }),
    );
  });

  it("appendAudio takes bytes in whole frames of the session's format", () => {
    const s = session();
    expect(checkAppend(s, new Uint8Array(160), ULAW_8K, 65_536)).toBe(true);
    expect(() => checkAppend(s, new Uint8Array(3), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => checkAppend(s, new Int16Array(4), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
  });

  it("a closed session refuses both with session_closed", async () => {
    const s = session();
    await s.close("completed");
    expect(() => checkAppendPcm(s, new Int16Array(2), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "session_closed" }),
    );
    expect(() => checkAppend(s, new Uint8Array(2), PCM16_16K, 65_536)).toThrow(
      expect.objectContaining({ code: "session_closed" }),
    );
  });
});
