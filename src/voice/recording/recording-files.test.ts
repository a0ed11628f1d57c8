import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listRecordings, openRecording, recordingName, writeRecordingInfo } from "./recording-files.js";

describe("recording files", () => {
  it("names files from ids with nothing but [A-Za-z0-9_-]", () => {
    expect(recordingName("telnyx", "v3:abc/../x.y")).toBe("telnyx-v3_abc____x_y");
    expect(() => recordingName("")).toThrow(/non-empty/);
  });

  it("lists the regular .wav files with their sidecars, newest first, and nothing else", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "talkgate-recfiles-")), "recordings");
    expect(await listRecordings(dir)).toEqual([]); // no directory yet
    mkdirSync(dir);
    writeFileSync(join(dir, "twilio-CA1.wav"), "RIFF");
    await writeRecordingInfo(dir, {
      name: "twilio-CA1",
      sessionId: "s1",
      startedAt: "2026-01-01T00:00:00.000Z",
      sampleRate: 8000,
      channels: ["caller", "assistant"],
      state: "complete",
    });
    writeFileSync(join(dir, "notes.txt"), "x");
    writeFileSync(join(dir, "bad.name.wav"), "x");
    mkdirSync(join(dir, "folder.wav"));
    symlinkSync("/dev/full", join(dir, "twilio-CA2.wav"));
    const listed = await listRecordings(dir);
    expect(listed.map((r) => r.name)).toEqual(["twilio-CA1"]);
    expect(listed[0]).toMatchObject({ file: "twilio-CA1.wav", bytes: 4, info: { sessionId: "s1" } });
  });

  it("opens a recording by name only: paths are invalid_params, anything but a regular file recording_not_found", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-recfiles-"));
    writeFileSync(join(dir, "a.wav"), "0123456789");
    symlinkSync("/dev/full", join(dir, "full.wav"));
    const rec = await openRecording(dir, "a");
    expect(rec.bytes).toBe(10);
    expect(Buffer.from(await rec.read(3, 4)).toString()).toBe("3456");
    expect(Buffer.from(await rec.read(8, 100)).toString()).toBe("89");
    for (const name of ["../a", "a.wav", "/etc/passwd", "", ".."])
      await expect(openRecording(dir, name)).rejects.toMatchObject({ code: "invalid_params" });
    for (const name of ["missing", "full"])
      await expect(openRecording(dir, name)).rejects.toMatchObject({ code: "recording_not_found" });
  });
});
