/**
 * The operations console at `/console` in real Chromium (one browser for the
 * file), against the whole server as worker A of a two-process Redis run
 * (worker B a real child process on the same key prefix): sign-in (a wrong
 * token, a token without admin, then `#token=` in the fragment, which leaves
 * the address bar); a call placed by the Twilio stand-in listed, followed
 * (transcript of both sides, latency, events) and hung up from the console
 * (the stand-in's socket closes, the fake Twilio REST API sees the hang-up);
 * a test-room bot listed and removed; worker B listed and drained.
 * Screenshots land in test-artifacts/.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { speechWav } from "./meetings-harness.js";
import {
  ADMIN_TOKEN,
  sessionOfCall,
  startTelephony,
  WRITE_TOKEN,
  type TelephonyHarness,
} from "../support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const ARTIFACTS = join(process.cwd(), "test-artifacts");
const prefix = uniquePrefix("console");
const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

interface Snapshot {
  signedIn: boolean;
  selected?: string;
  workers: { id: string; draining: boolean }[];
  sessions: {
    sessionId: string;
    surface: string;
    counterpart: Record<string, string>;
    state: string;
    providers: { kind: string; totalMs?: number }[];
  }[];
  actions: { verb: string; ok: boolean; code?: string }[];
  detail: {
    sessionId?: string;
    ended?: string;
    transcript: { role: string; text: string; final: boolean }[];
    events: string[];
    latency: { name: string; ms: number }[];
    line?: { frames: number; suppressedFrames: number; doubleTalkFrames: number; echoReturnLossDb?: number };
  };
}

let h: TelephonyHarness;
let b: WorkerProcess;
let browser: Browser;
let page: Page;

const snapshot = (): Promise<Snapshot> =>
  page.evaluate("window.talkgateConsole.snapshot()") as Promise<Snapshot>;

async function until(check: (s: Snapshot) => boolean, what: string, timeoutMs = 15_000): Promise<Snapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await snapshot();
    if (check(s)) return s;
    if (Date.now() > deadline)
      throw new Error(`console: ${what} not seen; last ${JSON.stringify(s).slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Clicks, again if a poll re-rendered the element between finding and clicking it. */
async function click(selector: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await page.click(selector);
      return;
    } catch (err) {
      if (attempt >= 5 || !/detached/.test(String(err))) throw err;
    }
  }
}

/** Clicks a destructive button twice (the console asks "Sure?" first). */
async function confirmClick(selector: string): Promise<void> {
  await click(selector);
  await page.waitForFunction(
    `document.querySelector(${JSON.stringify(selector)})?.getAttribute("data-armed") === "true"`,
  );
  await click(selector);
}

async function botStatus(botId: string): Promise<{ state: string; subCode?: string }> {
  const res = await fetch(`${h.baseUrl}/meetings/bots/${botId}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return (await res.json()) as { state: string; subCode?: string };
}

const shot = (name: string) =>
  page.screenshot({ path: join(ARTIFACTS, `console-${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const redis = { url: SHARED_REDIS_URL, keyPrefix: prefix };
  [h, b] = await Promise.all([
    startTelephony({
      mode: "stt-tts",
      config: {
        redis,
        cluster: { workerId: "console-a", roles: ["media", "bot"] },
        meetings: { testRoom: { enabled: true }, pollIntervalMs: 200 },
      },
    }),
    WorkerProcess.start({ workerId: "console-b", redisUrl: SHARED_REDIS_URL, keyPrefix: prefix }),
  ]);
  // The test room's Carol speaks a recording in a loop: the fake device's own beep is no speech (Chromium
  // 156.0.8078.108's beep made Moonshine say nothing at all, so the bot never captioned and the test waited out).
  const carolSays = speechWav(mkdtempSync(join(tmpdir(), "console-carol-")), "goforward.raw");
  browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      ...BOT_CHROMIUM_ARGS,
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${carolSays}`,
    ],
  });
  page = (await browser.pages())[0] ?? (await browser.newPage());
  await page.setViewport({ width: 1440, height: 1000 });
  page.on("pageerror", (err) => console.error("console page error:", err));
  page.on("console", (m) => m.type() === "error" && console.error("console page:", m.text()));
}, 60_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await h?.close();
  await b?.stop();
  await deleteKeys(SHARED_REDIS_URL, prefix);
}, 30_000);

describe("the operations console", () => {
  it("signs in: a wrong token and a token without admin are refused, `#token=` signs in and leaves the address bar", async () => {
    await page.goto(`${h.baseUrl}/console`);
    expect(page.url()).toBe(`${h.baseUrl}/console/`);
    await page.type("#token", "not-a-token-at-all");
    await page.click("#sign-in-form button[type=submit]");
    await page.waitForFunction(`document.getElementById("sign-in-error").textContent !== ""`);
    expect(await page.$eval("#sign-in-error", (el) => el.textContent)).toMatch(/refused/);
    await page.type("#token", WRITE_TOKEN);
    await page.click("#sign-in-form button[type=submit]");
    await page.waitForFunction(`/admin scope/.test(document.getElementById("sign-in-error").textContent)`);
    await shot("sign-in");

    await page.goto(`${h.baseUrl}/console/#token=${ADMIN_TOKEN}`);
    const s = await until((x) => x.signedIn && x.workers.length === 2, "both workers");
    expect(new URL(page.url()).hash).toBe("");
    expect(s.workers.map((w) => w.id)).toEqual(["console-a", "console-b"]);
    expect(
      await page.$$eval("[data-worker]", (els) => els.map((el) => el.getAttribute("data-worker"))),
    ).toEqual(["console-a", "console-b"]);
  }, 20_000);

  it("a live call appears, its transcript follows the caller and the answer, and hang-up ends it at the carrier", async () => {
    const call = await h.dial({ from: "+15557654321", to: "+15550001111" });
    const sessionId = sessionOfCall(h, call.callSid)!;
    await until((s) => s.sessions.some((x) => x.sessionId === sessionId), "the call listed");
    await click(`tr[data-session="${sessionId}"]`);
    await until(
      (s) => s.detail.sessionId === sessionId && s.detail.events.includes("session.created"),
      "follow",
    );

    await call.sendAudio(silence(300), { pace: "fast" });
    await call.sendAudio(speech, { pace: "fast" });
    await call.sendAudio(silence(1500), { pace: "fast" });
    const s = await until(
      (x) =>
        x.detail.transcript.some((l) => l.role === "user" && l.final && l.text.length > 0) &&
        x.detail.transcript.some((l) => l.role === "assistant" && l.text.length > 0) &&
        x.detail.latency.some((l) => l.name === "speech_end_to_first_audio"),
      "transcript and latency",
      25_000,
    );
    // Provider times come with the session's summary from its worker.
    await until(
      (x) =>
        x.sessions
          .find((y) => y.sessionId === sessionId)
          ?.providers.some((p) => p.kind === "tts" && p.totalMs !== undefined) === true,
      "provider times",
    );
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role?: string }).role === "user");
    expect(s.detail.transcript.find((l) => l.role === "user")?.text).toBe(
      (heard?.payload as { text?: string }).text,
    );
    expect(await page.$eval("#transcript", (el) => el.textContent)).toContain("Caller");
    await shot("call");

    await confirmClick(`tr[data-session="${sessionId}"] [data-action="hang-up"]`);
    await call.waitFor(() => call.closeCode !== undefined);
    await until((x) => !x.sessions.some((y) => y.sessionId === sessionId), "the call gone");
    const hangUp = h.rest.requests.find((r) => r.path.endsWith(`/Calls/${call.callSid}.json`));
    expect(hangUp?.params.get("Status")).toBe("completed");
    expect(h.eventsOf(sessionId, "session.closed")[0]?.payload).toMatchObject({ reason: "admin" });
    const after = await until((x) => x.detail.ended !== undefined, "the follow ended");
    expect(after.detail.ended).toBe("admin");
    // The line as the leg's echo guard saw it, in the call view (the caller was silent while the answer
    // played here, so few or no frames were weighed: the report is there all the same).
    expect(after.detail.line).toMatchObject({
      frames: expect.any(Number),
      suppressedFrames: expect.any(Number),
      doubleTalkFrames: expect.any(Number),
    });
    expect(await page.$eval("#detail-facts", (el) => el.textContent)).toMatch(
      /line.*double-talk of \d+ frames/,
    );
  }, 40_000);

  it("a test-room bot appears and is removed from the console", async () => {
    const room = await browser.newPage();
    await room.goto(`${h.baseUrl}/meetings/test-room/ops?name=Carol#token=${WRITE_TOKEN}`);
    await room.waitForFunction(`document.body.dataset.state === "in_call"`);
    // The room is closed whatever happens: a bot left in it would load the tests after this one.
    try {
      await botInTheConsole();
    } finally {
      await room.close().catch(() => {});
    }
  }, 100_000);

  /** The bot is listed, its view and latency panel say captions, and the console removes it. */
  async function botInTheConsole(): Promise<void> {
    const res = await fetch(`${h.baseUrl}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        // The room is behind the server's tokens: the bot's page reads one from the fragment, as people's do.
        meetingUrl: `${h.baseUrl}/meetings/test-room/ops#token=${WRITE_TOKEN}`,
        botName: "Notes",
        mode: "transcribe",
      }),
    });
    expect(res.status).toBe(201);
    const botId = ((await res.json()) as { id: string }).id;
    await page.bringToFront();
    const listed = await until(
      (s) => s.sessions.some((x) => x.surface === "meeting" && x.counterpart["botId"] === botId),
      "the bot listed",
      25_000,
    );
    const bot = listed.sessions.find((x) => x.counterpart["botId"] === botId)!;
    // Listed by the name it joined with, its id beside it.
    expect(bot.counterpart["botName"]).toBe("Notes");
    const row = await page.$eval(`tr[data-session="${bot.sessionId}"]`, (el) => el.textContent ?? "");
    expect(row).toContain("Notes");
    await click(`tr[data-session="${bot.sessionId}"]`);
    // A transcription bot answers no turn: its latency panel waits for captions, not for an answered turn.
    // Once its recognizer has a provider call to show, that is its first caption's figure: the process's
    // first recognition loads the model (2.6 s of CPU, tens of seconds in a loaded suite: docs/performance.md).
    await page.waitForFunction(`/caption/.test(document.getElementById("latency").textContent)`, {
      timeout: 75_000,
    });
    expect(await page.$eval("#latency", (el) => el.textContent)).not.toMatch(/answered turn/);
    try {
      await until(
        (s) => s.sessions.find((x) => x.sessionId === bot.sessionId)?.state === "in_call",
        "in call",
      );
    } catch (err) {
      throw new Error(`${String(err)}; bot ${JSON.stringify(await botStatus(botId))}`);
    }
    await shot("bot");
    await confirmClick(`tr[data-session="${bot.sessionId}"] [data-action="remove-bot"]`);
    await until((s) => !s.sessions.some((x) => x.sessionId === bot.sessionId), "the bot gone", 20_000);
    const status = await botStatus(botId);
    expect(status.state).toBe("ended");
  }

  it("on a server with no tokens configured, sign-in says so and names TALKGATE_ADMIN_TOKEN", async () => {
    const open = await createApp(
      validateConfig({ server: { port: 0 }, dataDir: mkdtempSync(join(tmpdir(), "console-")) }),
    );
    try {
      const { port } = await open.listen({ port: 0 });
      const other = await browser.newPage();
      await other.goto(`http://127.0.0.1:${port}/console/`);
      await other.type("#token", "any-token-at-all");
      await other.click("#sign-in-form button[type=submit]");
      await other.waitForFunction(`document.getElementById("sign-in-error").textContent !== ""`);
      const why = await other.$eval("#sign-in-error", (el) => el.textContent ?? "");
      expect(why).toMatch(/no tokens configured/);
      expect(why).toContain("TALKGATE_ADMIN_TOKEN");
      expect(why).not.toMatch(/This token has no admin scope/);
      await other.close();
    } finally {
      await open.close();
    }
  }, 90_000);

  it("drains worker B from the console: it shows draining and refuses new work", async () => {
    await confirmClick(`[data-worker="console-b"] [data-action="drain"]`);
    await until((s) => s.workers.find((w) => w.id === "console-b")?.draining === true, "B draining");
    expect((await b.readyz()).status).toBe(503);
    expect((await snapshot()).workers.find((w) => w.id === "console-a")?.draining).toBe(false);
    await page.waitForSelector(`[data-worker="console-b"].draining`);
    await shot("drained");
  }, 40_000);
});
