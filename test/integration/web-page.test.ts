import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { FakeChatCompletionsServer, longAnswer } from "../support/fake-chat-completions-server.js";
import { FakeOpenAiRealtimeServer, speechAudio } from "../support/fake-openai-realtime-server.js";
import { speechWav } from "./meetings-harness.js";
import { within } from "../support/bounded-waits.js";

/**
 * The talk page at `/` in real Chromium (one browser for the file), its
 * microphone a pocketsphinx-testdata recording ("go forward ten meters")
 * looped with a long pause, against the whole server: first on the embedded
 * defaults (pocketsphinx, the local agent, espeak-ng), then with an agent
 * that streams a long answer (barge-in, a dropped socket mid-answer), and
 * with a realtime provider (a local server speaking the OpenAI Realtime
 * protocol, its energy detector standing in for server VAD).
 * Screenshots land in test-artifacts/ (phone-sized viewport).
 */

const ARTIFACTS = join(process.cwd(), "test-artifacts");

interface Snapshot {
  mode: string;
  state: string;
  states: string[];
  label: string;
  connection: string;
  running: boolean;
  sessionId?: string;
  plan?: { turns: string; params: { mode: string; transport: string } };
  micSpeaking: boolean;
  /** The orb's drawn level (a CSS number) and whether it follows the voice each frame. */
  orb: { level: string; animating: boolean };
  transcript: {
    role: string;
    turnId: string;
    itemId?: string;
    text: string;
    streamed: string;
    final: boolean;
    interrupted: boolean;
  }[];
  player?: { chunks: number; playedMs: number; audibleMs: number; stops: number; playing: boolean };
  session?: {
    joins: number;
    replayed: number;
    duplicates: number;
    gaps: number;
    seqs: number[];
    lastSeq: number;
  };
  lastBargeIn?: { wasPlaying: boolean; playingAfter: boolean };
  bargeIns: number;
  latency: Record<string, number>;
  errors: { code?: string; message: string }[];
  events: string[];
}

interface Server {
  app: App;
  url: string;
  events: TalkEvent[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startServer(dir: string, name: string, config: Record<string, unknown> = {}): Promise<Server> {
  const app = await createApp(
    validateConfig({
      server: { port: 0 },
      dataDir: join(dir, `data-${name}`),
      log: { level: process.env["WEB_PAGE_LOG"] ?? "silent" },
      ...config,
    }),
  );
  const { port } = await app.listen({ port: 0 });
  const events: TalkEvent[] = [];
  app.runtime.subscribeAll((event) => events.push(event));
  return { app, url: `http://127.0.0.1:${port}/`, events };
}

describe("the talk page in Chromium", () => {
  let dir: string;
  let browser: Browser;
  let local: Server;
  let long: Server;
  let chat: FakeChatCompletionsServer;
  let realtime: Server;
  let openai: FakeOpenAiRealtimeServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "talkgate-web-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    // 0.5 s, the recording (~2.6 s), then 7 s of silence: one utterance every ~10 s.
    const wav = speechWav(dir, "goforward.raw", 7);
    browser = await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      userDataDir: join(dir, "profile"),
      args: [
        ...BOT_CHROMIUM_ARGS,
        "--use-fake-device-for-media-stream",
        `--use-file-for-fake-audio-capture=${wav}`,
      ],
    });
    local = await startServer(dir, "local");
    // Streams for ~11 s, so the answer is still being produced when the next utterance (~10 s later) barges in.
    chat = new FakeChatCompletionsServer({ apiKey: "k", answer: longAnswer(1500), tokenDelayMs: 30 });
    const chatUrl = await chat.start();
    long = await startServer(dir, "long", {
      agent: { endpoint: { baseUrl: chatUrl, model: "fake-model", apiKey: "k" } },
    });
    const reply = "Sure, going forward ten meters.";
    openai = new FakeOpenAiRealtimeServer({
      apiKey: "sk-web-page",
      replies: [{ audio: speechAudio(reply, "pcm16"), transcript: reply }],
      userTranscript: "go forward ten meters",
    });
    const realtimeUrl = await openai.start();
    realtime = await startServer(dir, "realtime", {
      talk: {
        realtime: {
          provider: "openai",
          providers: {
            openai: {
              apiKey: "sk-web-page",
              baseUrl: realtimeUrl.replace(/^ws/, "http").replace(/\/realtime$/, ""),
            },
          },
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    await local?.app.close();
    await long?.app.close();
    await realtime?.app.close();
    await chat?.close();
    await openai?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  /**
   * A page in `mode`, started. Its user prefers reduced motion unless `motion` is "full": the orb's repaint each
   * frame was a third of the page's CPU (docs/web-page.md), and only the conversation test needs it.
   */
  async function open(server: Server, mode: string, motion: "reduce" | "full" = "reduce"): Promise<Page> {
    const page = await browser.newPage();
    await page.emulateMediaFeatures([
      { name: "prefers-reduced-motion", value: motion === "reduce" ? "reduce" : "no-preference" },
    ]);
    await page.setViewport({ width: 390, height: 760, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    page.on("pageerror", (err) => console.error("page error:", err));
    await page.goto(server.url);
    if (mode !== "conversation") await page.click(`.modes [data-mode="${mode}"]`);
    await page.click("#start");
    await waitFor(page, (s) => s.running && s.connection === "connected");
    return page;
  }

  const snapshot = (page: Page): Promise<Snapshot> =>
    page.evaluate(`window.talkPage.snapshot()`) as Promise<Snapshot>;

  /** Polls the page until `done`; fails with the page's state on a page error or after `ms`. */
  async function waitFor(
    page: Page,
    done: (s: Snapshot) => boolean,
    what = "condition",
    ms = 60_000,
  ): Promise<Snapshot> {
    const deadline = Date.now() + ms;
    for (;;) {
      const s = await snapshot(page);
      if (done(s)) return s;
      if (s.errors.length > 0 || Date.now() > deadline) {
        const { transcript, player, session, events, errors, state, bargeIns } = s;
        const seen = { state, bargeIns, errors, player, joins: session?.joins, events: events.slice(-12) };
        throw new Error(
          `${what}: ${errors.length > 0 ? "page error" : "timed out"} ${JSON.stringify({ ...seen, transcript })}`,
        );
      }
      await sleep(100);
    }
  }

  /** Like waitFor without failing on page errors (the test expects one): after `ms`, fails with the last snapshot. */
  async function waitForPage(page: Page, done: (s: Snapshot) => boolean, ms = 45_000): Promise<Snapshot> {
    const until = Date.now() + ms;
    for (;;) {
      const s = await snapshot(page);
      if (done(s)) return s;
      if (Date.now() > until)
        throw new Error(
          `the page did not reach the state in ${ms} ms; last: ${JSON.stringify(s).slice(0, 2000)}`,
        );
      await sleep(100);
    }
  }

  const userWords = (s: Snapshot): string =>
    s.transcript
      .filter((l) => l.role === "user" && l.final)
      .map((l) => l.text.toLowerCase())
      .join(" ");

  const heardUser = (s: Snapshot): boolean => /\b(forward|go|ten|meters?)\b/.test(userWords(s));

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `web-page-${name}.png`) });
  }

  it("serves the page with its modules, a CSP and revalidation", async () => {
    const res = await fetch(local.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    const worklet = await fetch(new URL("capture-worklet.js", local.url));
    expect(worklet.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    const again = await fetch(local.url, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
    // The Talk client the page uses: src/client, bundled for the browser, served with the same headers.
    const client = await fetch(new URL("lib/talk-client.js", local.url));
    expect(client.status).toBe(200);
    expect(client.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(client.headers.get("content-security-policy")).toContain("script-src 'self'");
    const source = await client.text();
    expect(source).toMatch(/export\s*\{[^}]*\bSessionLink\b[^}]*\}/);
    expect(source).toMatch(/\bTalkClient = class\b/);
    const cached = await fetch(new URL("lib/talk-client.js", local.url), {
      headers: { "if-none-match": client.headers.get("etag")! },
    });
    expect(cached.status).toBe(304);
  });

  it("conversation (stt-tts on the embedded defaults): the user's words in the transcript, the answer played", async () => {
    const page = await open(local, "conversation", "full");
    const started = await snapshot(page);
    expect(started.plan).toMatchObject({
      turns: "detector",
      params: { mode: "stt-tts", transport: "managed-room" },
    });
    const orbLevels = new Set<string>();
    const s = await waitFor(
      page,
      (s) => {
        orbLevels.add(s.orb.level);
        return heardUser(s) && (s.player?.audibleMs ?? 0) >= 500;
      },
      "words and audio",
    );
    // The orb followed the voice: the user's and the answer's levels, not one still value.
    expect(s.orb.animating).toBe(true);
    expect(orbLevels.size).toBeGreaterThan(3);
    expect(s.transcript.some((l) => l.role === "assistant" && /you said/i.test(l.text))).toBe(true);
    const states = (await snapshot(page)).events;
    expect(states).toContain("output.audio.started");
    // The page talked through the server's bundled client, the only script that opens a socket.
    const scripts = (await page.evaluate(
      `performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname)`,
    )) as string[];
    expect(scripts).toContain("/lib/talk-client.js");
    await waitFor(page, (s) => s.state === "listening" && s.latency["turn_end_to_first_audio"] !== undefined);
    await screenshot(page, "conversation");
    await page.click("#start");
    await page.close();
  }, 90_000);

  it("push to talk: holding Space is one turn (startTurn/endTurn), the answer is played; Escape cancels", async () => {
    const page = await open(local, "push-to-talk");
    expect((await snapshot(page)).plan?.turns).toBe("button");
    // Press in the pause before the next utterance, release once it has been spoken.
    await waitFor(page, (s) => s.micSpeaking, "speech");
    await waitFor(page, (s) => !s.micSpeaking, "pause");
    await page.keyboard.down("Space");
    await waitFor(page, (s) => s.micSpeaking, "next utterance");
    await waitFor(page, (s) => !s.micSpeaking, "its end");
    await page.keyboard.up("Space");
    const s = await waitFor(
      page,
      (s) => heardUser(s) && (s.player?.audibleMs ?? 0) >= 500,
      "words and audio",
    );
    const sessionEvents = local.events.filter((e) => e.sessionId === s.sessionId);
    expect(sessionEvents.filter((e) => e.type === "turn.started").length).toBeGreaterThanOrEqual(1);
    await screenshot(page, "push-to-talk");

    // Press and cancel: the server cancels the turn.
    await page.keyboard.down("Space");
    await waitFor(
      page,
      (s) =>
        s.events.includes("capture.started") &&
        s.events.lastIndexOf("capture.started") > s.events.lastIndexOf("turn.cancelled"),
    );
    await page.keyboard.press("Escape");
    await page.keyboard.up("Space");
    await waitFor(page, (s) => s.events.includes("turn.cancelled"), "cancelled turn");
    await page.click("#start");
    await page.close();
  }, 90_000);

  it("captions (transcription): the user's words as captions, no assistant audio", async () => {
    const page = await open(local, "captions");
    expect((await snapshot(page)).plan?.params).toMatchObject({
      mode: "transcription",
      transport: "gateway-relay",
    });
    const s = await waitFor(page, heardUser, "captions");
    expect(s.transcript.every((l) => l.role === "user")).toBe(true);
    // Its user prefers reduced motion: the orb held still while the microphone heard words.
    expect(s.orb).toEqual({ level: "0", animating: false });
    const ringAnimation = `getComputedStyle(document.querySelector("#orb .ring")).animationName`;
    expect(await page.evaluate(ringAnimation)).toBe("none");
    expect(s.player?.chunks ?? 0).toBe(0);
    await screenshot(page, "captions");
    await page.click("#start");
    await page.close();
  }, 60_000);

  it("conversation over realtime (gateway-relay) when a realtime provider is configured: both sides' words, the answer played", async () => {
    const page = await open(realtime, "conversation");
    expect((await snapshot(page)).plan).toMatchObject({
      turns: "provider",
      params: { mode: "realtime", transport: "gateway-relay", inputFormat: { sampleRate: 24000 } },
    });
    const s = await waitFor(
      page,
      (s) =>
        heardUser(s) &&
        s.transcript.some((l) => l.role === "assistant" && /ten meters/.test(l.text)) &&
        (s.player?.audibleMs ?? 0) >= 500,
      "realtime answer",
    );
    expect(s.events).toContain("input.audio.speech_started");
    expect(s.events).toContain("output.audio.started");
    await screenshot(page, "conversation-realtime");
    await page.click("#start");
    await page.close();
  }, 60_000);

  it("with auth.tokens: refused without a token, then talks with the one given as #token (the bearer subprotocol)", async () => {
    // Each step bounded and named: in one full-suite run (of many) this test hung to its timeout with no
    // other word, and alone or under load it takes 1.5-2.6 s; a recurrence now says where it stood.
    const step = <T>(label: string, work: Promise<T>): Promise<T> => within(15_000, work, label);
    const secured = await step(
      "start the server",
      startServer(dir, "auth", {
        auth: { tokens: [{ name: "page", token: "page-token-0123456789", scopes: ["write"] }] },
      }),
    );
    let page = await step("open a page", browser.newPage());
    try {
      await step("load the page", page.goto(secured.url));
      await step("click Start", page.click("#start"));
      const refused = await waitForPage(page, (s) => s.errors.length > 0 && !s.running, 15_000);
      expect(refused.errors[0]!.message).toMatch(/token/i);
      expect(await page.evaluate(`document.querySelector(".settings").open`)).toBe(true);
      await step("close the refused page", page.close());

      page = await step("open a second page", browser.newPage());
      await step("load the page with #token", page.goto(`${secured.url}#token=page-token-0123456789`));
      // The fragment is taken and removed from the address bar.
      expect(new URL(page.url()).hash).toBe("");
      await step("choose captions", page.click(`.modes [data-mode="captions"]`));
      await step("click Start with the token", page.click("#start"));
      const s = await waitForPage(page, (s) => s.running && s.sessionId !== undefined, 15_000);
      expect(secured.events.some((e) => e.sessionId === s.sessionId && e.type === "session.created")).toBe(
        true,
      );
      await step("click Stop", page.click("#start"));
    } finally {
      await step("close the page", page.close()).catch((err: unknown) => console.error(err));
      await step("close the server", secured.app.close());
    }
  }, 60_000);

  it("a session the server closes as it shuts down (Ctrl-C) shows Disconnected, not Listening", async () => {
    const page = await open(local, "captions");
    const { sessionId } = await snapshot(page);
    expect(await local.app.gateway.closeSession(sessionId!, "shutting_down")).toBe(true);
    const s = await waitFor(page, (s) => !s.running && s.state === "disconnected", "disconnected");
    expect(s.label).toBe("Disconnected");
    expect(await page.$eval("#detail", (el) => el.textContent)).toMatch(/shutting down/);
    await page.close();
  }, 60_000);

  it("barge-in: speaking over a long answer stops its playback at once and the server cancels it", async () => {
    const page = await open(long, "conversation");
    await waitFor(page, (s) => (s.player?.audibleMs ?? 0) >= 500, "answer playing");
    const s = await waitFor(page, (s) => s.bargeIns >= 1, "barge-in");
    expect(s.lastBargeIn).toEqual({ wasPlaying: true, playingAfter: false });
    const cancelled = await waitFor(page, (s) =>
      s.transcript.some((l) => l.role === "assistant" && l.interrupted),
    );
    const sessionEvents = long.events.filter((e) => e.sessionId === cancelled.sessionId);
    expect(
      sessionEvents.some((e) => e.type === "output.audio.cancelled" || e.type === "turn.cancelled"),
    ).toBe(true);
    await screenshot(page, "barge-in");
    await page.click("#start");
    await page.close();
  }, 90_000);

  it("a socket dropped mid-answer rejoins with afterSeq: every event once, the transcript without gap or duplicate", async () => {
    const page = await open(long, "conversation");
    const speaking = await waitFor(page, (s) => s.state === "speaking", "answer");
    const sessionId = speaking.sessionId!;
    const turnId = speaking.transcript.filter((l) => l.role === "assistant").at(-1)!.turnId;
    await page.evaluate(`window.talkPage.drop()`);
    const rejoined = await waitFor(
      page,
      (s) => s.session?.joins === 1 && s.connection === "connected",
      "rejoin",
    );
    // While the socket was gone the page said so, then went back to the conversation.
    const after = rejoined.states.slice(speaking.states.length);
    expect(after).toContain("disconnected");
    expect(rejoined.state).not.toBe("disconnected");
    // The dropped turn's answer ends on the server (its text done, or cut by the next utterance)...
    const ends = ["output.text.done", "output.audio.cancelled", "turn.cancelled"];
    const ended = () =>
      long.events.find((e) => e.sessionId === sessionId && e.turnId === turnId && ends.includes(e.type));
    while (!ended()) await sleep(100);
    // ... and the page has every event up to it.
    const s = await waitFor(page, (s) => s.session!.lastSeq >= ended()!.seq, "events up to the end");
    await screenshot(page, "reconnect");
    await page.click("#start");
    await page.close();

    const session = s.session!;
    expect(session.joins).toBe(1);
    expect(session.replayed).toBeGreaterThan(0);
    expect(session.gaps).toBe(0);
    expect(session.duplicates).toBe(0);
    expect(session.seqs).toEqual(Array.from({ length: session.lastSeq }, (_, i) => i + 1));
    const serverEvents = long.events.filter((e) => e.sessionId === sessionId && e.seq <= session.lastSeq);
    const items = new Set(serverEvents.filter((e) => e.type === "output.text.delta").map((e) => e.itemId));
    expect(items.size).toBeGreaterThan(0);
    for (const itemId of items) {
      const line = s.transcript.find((l) => l.role === "assistant" && l.itemId === itemId);
      const streamed = serverEvents
        .filter((e) => e.type === "output.text.delta" && e.itemId === itemId)
        .map((e) => (e.payload as { text: string }).text)
        .join("");
      expect(line?.streamed).toBe(streamed);
      const done = serverEvents.find((e) => e.type === "output.text.done" && e.itemId === itemId);
      if (done) expect(line?.text).toBe((done.payload as { text: string }).text);
    }
    const userFinals = serverEvents
      .filter((e) => e.type === "transcript.done" && (e.payload as { role: string }).role === "user")
      .map((e) => (e.payload as { text: string }).text.trim())
      .filter(Boolean);
    expect(s.transcript.filter((l) => l.role === "user").map((l) => l.text)).toEqual(userFinals);
  }, 120_000);
});
