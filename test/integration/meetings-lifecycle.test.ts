import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTranscript } from "../../src/meetings/bot/transcript-log.js";
import { startMeetingsHarness, speechWav, wordsOf, type MeetingsHarness } from "./meetings-harness.js";

/** The bot browser's main process: its profile directory is named after the bot id; helpers carry --type=. */
function botBrowserPid(botId: string): number {
  const out = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" });
  const line = out.split("\n").find((l) => l.includes(`talkgate-bot-${botId}-`) && !l.includes("--type="));
  if (!line) throw new Error(`no browser process for bot ${botId}`);
  return Number.parseInt(line.trim(), 10);
}

/** Chromium processes: at most 1 bot + 2 participants (the guests' shared one, Dave's) at a time. */
describe("meeting bot lifecycle in the local test meeting", () => {
  let h: MeetingsHarness;
  // The camera URL page: one colour, which the page reads from here every 100 ms (the test changes it).
  let colour = "#ffff00";
  let board: Server;
  let boardOrigin: string;

  beforeAll(async () => {
    board = createServer((req, res) => {
      if (req.url === "/colour") return res.end(colour);
      res.setHeader("content-type", "text/html");
      res.end(`<!doctype html><body style="margin:0;height:100vh"><script>
setInterval(async () => { document.body.style.background = await (await fetch("/colour")).text(); }, 100);
</script>`);
    });
    await new Promise<void>((r) => board.listen(0, "127.0.0.1", r));
    boardOrigin = `http://127.0.0.1:${(board.address() as AddressInfo).port}`;
    // No page here is listened to or has its audio levels read (the camera test reads video): no level
    // meters in the rooms, participants that play nothing they hear.
    h = await startMeetingsHarness(
      { aloneTimeoutMs: 500, captureTimeoutMs: 10_000, camera: { urlOrigins: [boardOrigin] } },
      {},
      { levelMeters: false, participantsListen: false },
    );
  }, 30_000);

  afterAll(async () => {
    await h?.close();
    board?.close();
  }, 30_000);

  it("refuses a request whose URL no platform driver handles, before launching anything", async () => {
    const res = await h.post({
      meetingUrl: "https://meet.example.org/abc",
      botName: "Bot",
      mode: "transcribe",
    });
    expect(res.status).toBe(400);
    expect(res.body.error?.code).toBe("invalid_params");
    const bad = await h.post({ meetingUrl: h.roomUrl("x"), botName: "", mode: "transcribe", extra: 1 });
    expect(bad.status).toBe(400);
  });

  it("ends fatal with meeting_not_found for a meeting URL that leads nowhere", async () => {
    const res = await h.post({
      meetingUrl: h.roomUrl("No_Such_Room!"),
      platform: "test-room",
      botName: "Bot",
      mode: "transcribe",
    });
    expect(res.status).toBe(201);
    const done = await h.waitFor(res.body.id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.state).toBe("fatal");
    expect(done.subCode).toBe("meeting_not_found");
  }, 30_000);

  it("leaves with left_alone once the last participant has gone", async () => {
    const carol = await h.guest("solo", "Carol");
    const res = await h.post({ meetingUrl: h.roomUrl("solo"), botName: "Bot", mode: "transcribe" });
    const id = res.body.id;
    await h.waitFor(id, (s) => s.state === "in_call" && s.participants.includes("Carol"));
    await carol.page.evaluate("window.testRoom.leave()");
    const done = await h.waitFor(id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.state).toBe("ended");
    expect(done.subCode).toBe("left_alone");
    await carol.close();
  }, 40_000);

  it("leaves with requested on DELETE", async () => {
    const erin = await h.guest("delete-me", "Erin");
    const res = await h.post({ meetingUrl: h.roomUrl("delete-me"), botName: "Bot", mode: "transcribe" });
    const id = res.body.id;
    await h.waitFor(id, (s) => s.state === "in_call");
    const del = await fetch(`${h.baseUrl}/meetings/bots/${id}`, { method: "DELETE" });
    expect(del.status).toBe(202);
    const done = await h.waitFor(id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.subCode).toBe("requested");
    // The participant sees the bot go.
    await erin.page.waitForFunction(`document.querySelectorAll("#roster li:not([data-self])").length === 0`);
    await erin.close();
    expect((await fetch(`${h.baseUrl}/meetings/bots/no-such-bot`)).status).toBe(404);
  }, 40_000);

  it("leaves with session_closed when its session is closed from outside (the runtime, a lost lease)", async () => {
    const fay = await h.guest("closed-session", "Fay");
    const res = await h.post({ meetingUrl: h.roomUrl("closed-session"), botName: "Bot", mode: "transcribe" });
    const id = res.body.id;
    const inCall = await h.waitFor(id, (s) => s.state === "in_call");
    await h.app.runtime.getSession(inCall.sessionId!)!.close("owner_lost");
    const done = await h.waitFor(id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.state).toBe("ended");
    expect(done.subCode).toBe("session_closed");
    // The bot really left: the participant sees it go, and its browser is gone.
    await fay.page.waitForFunction(`document.querySelectorAll("#roster li:not([data-self])").length === 0`);
    expect(() => botBrowserPid(id)).toThrow();
    await fay.close();
  }, 40_000);

  it("ends fatal with browser_crashed when its browser is killed, keeping the transcript so far", async () => {
    const dave = await h.participant("crash", "Dave", speechWav(h.dir, "goforward.raw"));
    const res = await h.post({ meetingUrl: h.roomUrl("crash"), botName: "Bot", mode: "transcribe" });
    const id = res.body.id;
    const before = await h.waitForTranscript(id, (l) => wordsOf(l, "Dave").has("forward"));

    process.kill(botBrowserPid(id), "SIGKILL");
    const done = await h.waitFor(id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.state).toBe("fatal");
    expect(done.subCode).toBe("browser_crashed");
    // Every line finalized before the crash is still there, on disk and over HTTP.
    const after = await h.transcript(id);
    expect(after.slice(0, before.length)).toEqual(before);
    const file = readTranscript(`${h.app.config.dataDir}/meetings/${id}.transcript.jsonl`);
    expect(file.slice(0, before.length)).toEqual(before);
    await dave.close();
  }, 60_000);

  it("shows a page from an allowed origin as its camera, as it changes; refuses other origins", async () => {
    const gina = await h.guest("camera-url", "Gina");
    const request = (cameraUrl: string) =>
      h.post({
        meetingUrl: h.roomUrl("camera-url", { video: "on" }),
        botName: "Bot",
        mode: "transcribe",
        camera: "url",
        cameraUrl,
      });
    for (const elsewhere of [`http://localhost:${new URL(boardOrigin).port}/`, "https://example.com/"]) {
      const refused = await request(elsewhere);
      expect(refused.status).toBe(400);
      expect(refused.body.error?.code).toBe("invalid_params");
      expect(
        (refused.body.error as { details?: { issues?: { path: string }[] } }).details?.issues?.[0]?.path,
      ).toBe("cameraUrl");
    }
    const res = await request(`${boardOrigin}/board`);
    expect(res.status).toBe(201);
    await h.waitFor(res.body.id, (s) => s.state === "in_call");
    const level = (): Promise<number> =>
      gina.page.evaluate(`window.testRoom.videoLevel("Bot")`) as Promise<number>;
    // Yellow (#ffff00) is luma 226 (BT.601); then blue (#0000ff), 29: each frame of the page reaches Gina.
    // The band, not a bound: the page's first frames are blank (white, 255) before it paints.
    const within = (low: number, high: number) => async () => {
      const v = await level();
      return v > low && v < high ? "in band" : `level ${v}`;
    };
    await expect.poll(within(200, 245), { timeout: 30_000, interval: 200 }).toBe("in band");
    colour = "#0000ff";
    await expect.poll(within(10, 50), { timeout: 20_000, interval: 200 }).toBe("in band");
    await fetch(`${h.baseUrl}/meetings/bots/${res.body.id}`, { method: "DELETE" });
    await h.waitFor(res.body.id, (s) => s.state === "ended" || s.state === "fatal");
    await gina.close();
    // 120 s: at the suite's start this file runs beside six bots of meetings-meet-bot, and the bot's
    // join alone took most of the former 60 s there (two full runs); the polls above keep their bounds.
  }, 120_000);
});
