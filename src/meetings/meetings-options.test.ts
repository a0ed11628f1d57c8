import { describe, expect, it } from "vitest";
import { validateConfig } from "../config/load-config.js";
import { resolveMeetingsOptions } from "./meetings-options.js";

const WHSEC = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;

describe("meetings options added by issue 17", () => {
  it("defaults: chat on, chat answers spoken, spoken answers posted, follow poll 500 ms, no extra Chromium flags", () => {
    const o = resolveMeetingsOptions();
    expect(o.chat).toEqual({ enabled: true, speakAnswers: true, postSpokenAnswers: true });
    expect(o.followPollMs).toBe(500);
    expect(o.chromiumArgs).toEqual([]);
    expect(validateConfig({}).config.meetings.chat.enabled).toBe(true);
  });

  it("refuses bad chat flags, poll intervals and Chromium flags with config_invalid naming the field", () => {
    expect(() => resolveMeetingsOptions({ chat: { enabled: "yes" as unknown as boolean } })).toThrow(
      /meetings\.chat\.enabled/,
    );
    expect(() => resolveMeetingsOptions({ followPollMs: 10 })).toThrow(/meetings\.followPollMs/);
    expect(() => resolveMeetingsOptions({ chromiumArgs: ["rm -rf"] })).toThrow(/meetings\.chromiumArgs/);
    expect(() => validateConfig({ meetings: { chromiumArgs: ["not-a-flag"] } })).toThrow(/chromiumArgs/);
    expect(
      resolveMeetingsOptions({ chromiumArgs: ["--mute-audio", "--renderer-process-limit=1"] }).chromiumArgs,
    ).toEqual(["--mute-audio", "--renderer-process-limit=1"]);
  });

  it("webhook secrets: whsec_ of 24..64 bytes or a 16+ character string; rotation secrets checked too; events known", () => {
    const url = "http://127.0.0.1:9/hook";
    expect(resolveMeetingsOptions({ webhook: { url, secret: WHSEC } }).webhook).toMatchObject({
      previousSecrets: [],
      events: ["meeting.bot.state", "meeting.transcript.line"],
    });
    expect(resolveMeetingsOptions({ webhook: { url, secret: "plain-secret-0123456" } }).webhook?.secret).toBe(
      "plain-secret-0123456",
    );
    expect(() =>
      resolveMeetingsOptions({ webhook: { url, secret: `whsec_${Buffer.alloc(8).toString("base64")}` } }),
    ).toThrow(/webhook\.secret.*24\.\.64 bytes/);
    expect(() =>
      resolveMeetingsOptions({
        webhook: { url, secret: WHSEC, previousSecrets: ["whsec_!!!!!!!!!!!!!!!!"] },
      }),
    ).toThrow(/previousSecrets\[0\]/);
    expect(() =>
      resolveMeetingsOptions({ webhook: { url, secret: WHSEC, events: ["meeting.everything"] } }),
    ).toThrow(/webhook\.events/);
    expect(() => validateConfig({ meetings: { webhook: { url, secret: WHSEC, events: ["x"] } } })).toThrow();
  });

  it("camera: no URL origins and 2 fps by default, video not received; origins and fps checked", () => {
    const o = resolveMeetingsOptions();
    expect(o.camera).toEqual({ urlOrigins: [], fps: 2 });
    expect(o.receiveVideo).toBe(false);
    expect(validateConfig({}).config.meetings.camera).toEqual({ urlOrigins: [], fps: 2 });
    expect(
      resolveMeetingsOptions({ camera: { urlOrigins: ["https://board.example.com"] } }).camera.urlOrigins,
    ).toEqual(["https://board.example.com"]);
    expect(() =>
      resolveMeetingsOptions({ camera: { urlOrigins: ["https://board.example.com/path"] } }),
    ).toThrow(/meetings\.camera\.urlOrigins/);
    expect(() => resolveMeetingsOptions({ camera: { fps: 0 } })).toThrow(/meetings\.camera\.fps/);
    expect(() => validateConfig({ meetings: { camera: { urlOrigins: ["ftp://x"] } } })).toThrow(/urlOrigins/);
    expect(() => resolveMeetingsOptions({ receiveVideo: "no" as unknown as boolean })).toThrow(
      /meetings\.receiveVideo/,
    );
  });
});
