import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeMulaw, readWav } from "../../codecs/index.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { recordingLogger } from "../../core/testing/recording-logger.js";
import type { TalkRuntime } from "../../core/session-types.js";
import type { TalkEvent } from "../../core/talk-events.js";
import { ULAW_8K } from "../../core/talk-types.js";
import { lineAudio } from "../line-audio.js";
import type { PlayoutLine } from "../playout/call-playout.js";
import { CallRecording } from "./call-recording.js";

/**
 * A call's recording holds the assistant's audio from the call's first frame:
 * the recording notice is sent the moment the call starts, before the file
 * (or its directory) exists, and must not be lost to a slow disk.
 */

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function recording(dir: string) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const events: TalkEvent[] = [];
  session.subscribe((e) => events.push(e));
  const rec = new CallRecording({
    policy: { dir, numbers: undefined, notice: "This call is recorded." },
    session,
    line: lineAudio(ULAW_8K),
    carrier: "twilio",
    callId: "CA0123456789abcdef0123456789abcdef",
    logger: recordingLogger(),
  });
  const sent: Uint8Array[] = [];
  const line: PlayoutLine = {
    media: (audio) => void sent.push(audio),
    mark: () => undefined,
    clear: () => undefined,
    bufferedAmount: 0,
  };
  return { rec, line: rec.tap(line), sent, events };
}

describe("CallRecording", () => {
  it("records the assistant's first frame, sent as the call starts, and creates the recordings directory", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "talkgate-callrec-")), "recordings");
    const { rec, line, sent } = recording(dir);
    const first = encodeMulaw(new Int16Array(160).fill(4000));
    line.media(first); // at once: the file is not open yet
    line.mark("m1");
    rec.markPlayed("m1"); // the carrier played it: kept though the call ends before 20 ms passed
    expect(sent).toHaveLength(1);
    await rec.close();
    const wav = readWav(readFileSync(join(dir, `${rec.name}.wav`)));
    const assistant = wav.pcm.filter((_, i) => i % 2 === 1);
    // Placed where the recorder's clock was when it was sent (a few ms in), and all of it.
    const at = assistant.findIndex((v) => v !== 0);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(Array.from(assistant.slice(at))).toEqual(Array.from(lineAudio(ULAW_8K).toPcm(first)));
    const info = JSON.parse(readFileSync(join(dir, `${rec.name}.json`), "utf8")) as { state: string };
    expect(info.state).toBe("complete");
  });

  it("a recordings directory that cannot be created: the call goes on, the recording fails with its reason", async () => {
    const base = mkdtempSync(join(tmpdir(), "talkgate-callrec-"));
    writeFileSync(join(base, "file"), "x");
    const { rec, line, sent, events } = recording(join(base, "file", "recordings"));
    expect(() => line.media(new Uint8Array(160).fill(0xff))).not.toThrow();
    expect(sent).toHaveLength(1);
    await expect(rec.close()).resolves.toBeUndefined();
    const errors = events.filter((e) => e.type === "session.error").map((e) => e.payload);
    expect(errors).toEqual([
      expect.objectContaining({ code: "recording_failed", details: { reason: "ENOTDIR" } }),
    ]);
    expect(events.some((e) => e.type === "session.updated")).toBe(false);
  });
});
