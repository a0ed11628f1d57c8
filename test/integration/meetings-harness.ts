/**
 * Real parts for the meetings tests: the whole app on 127.0.0.1:0 (runtime,
 * local pocketsphinx STT, gateway, meetings plugin, in-process jobs), and
 * test participants as Chromium processes whose microphone is a WAV file made
 * from Debian's pocketsphinx-testdata recordings.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import WebSocket from "ws";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { BotStatus, TranscriptLine } from "../../src/meetings/index.js";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { SharedBotBrowser } from "../support/shared-bot-browser.js";

export const SPEECH_DIR = "/usr/share/pocketsphinx/test/data";

/** A loopable WAV: the recording, then `gapSeconds` of silence (so each loop is a separate utterance). */
export function speechWav(dir: string, recording: string, gapSeconds = 2.5): string {
  const out = join(dir, `${recording.replace(/\W/g, "_")}.wav`);
  const input = recording.endsWith(".raw")
    ? ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1"]
    : [];
  execFileSync("sox", [
    "-V1",
    ...input,
    join(SPEECH_DIR, recording),
    "-r",
    "16000",
    "-c",
    "1",
    "-b",
    "16",
    out,
    "pad",
    "0.5",
    String(gapSeconds),
  ]);
  return out;
}

/** Recordings one after another, `pauseSeconds` apart, then `gapSeconds` of silence before the loop repeats. */
export function speechSequenceWav(
  dir: string,
  name: string,
  recordings: string[],
  pauseSeconds: number,
  gapSeconds: number,
): string {
  const parts = recordings.map((r) => speechWav(dir, r, pauseSeconds));
  const out = join(dir, `${name}.wav`);
  execFileSync("sox", ["-V1", ...parts, out, "pad", "0", String(gapSeconds)]);
  return out;
}

/** A silent microphone (without a file Chromium's fake device beeps, which is speech to a VAD). */
export function silenceWav(dir: string, seconds = 5): string {
  const out = join(dir, "silence.wav");
  execFileSync("sox", ["-V1", "-n", "-r", "16000", "-c", "1", "-b", "16", out, "trim", "0", String(seconds)]);
  return out;
}

export interface Participant {
  name: string;
  page: Page;
  browser: Browser;
  close(): Promise<void>;
}

export interface MeetingsHarness {
  app: App;
  baseUrl: string;
  dir: string;
  /** The room's address with `query` (page options) and the harness's own (`levels=off` when meters are off). */
  roomUrl(room: string, query?: Record<string, string>): string;
  /** A Chromium participant speaking `wav` in a loop (or silent without one); `query` adds page options. */
  participant(room: string, name: string, wav?: string, query?: Record<string, string>): Promise<Participant>;
  /**
   * A silent participant: a page of one Chromium the harness keeps for its guests (launched on
   * first use, closed with the harness), so a file's silent participants cost one browser start, not one
   * each. `close` closes the page (the participant leaves); the browser stays for the next guest.
   */
  guest(room: string, name: string, query?: Record<string, string>): Promise<Participant>;
  post(
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: BotStatus & { error?: { code: string } } }>;
  status(id: string): Promise<BotStatus>;
  transcript(id: string): Promise<TranscriptLine[]>;
  /**
   * Polls GET /meetings/bots/:id until `done` holds. Bounded by the test's own timeout, or by `within`
   * (ms): then it fails naming `what` and the last status, where a test timeout says only that it hung.
   */
  waitFor(id: string, done: (s: BotStatus) => boolean, bound?: WaitBound): Promise<BotStatus>;
  waitForTranscript(
    id: string,
    done: (lines: TranscriptLine[]) => boolean,
    bound?: WaitBound,
  ): Promise<TranscriptLine[]>;
  close(): Promise<void>;
}

export interface MeetingsHarnessOptions {
  /**
   * false: every test room page of the harness (participants, guests, the rooms bots are sent to with
   * `roomUrl`) runs without level meters (`levels=off`), unless a page's own query asks (`levels: "on"`
   * for a participant whose `peakLevel` the test reads). Default true (benches measure the page as it is).
   */
  levelMeters?: boolean;
  /**
   * false: participants and guests play none of what they hear (`audio=off`), unless a page's own query
   * asks (`audio: "on"`). The bots' rooms are not touched: a bot hears through the page's audio. Default true.
   */
  participantsListen?: boolean;
  /**
   * true: the file's bots share one Chromium, each in a browser context of its own
   * (test/support/shared-bot-browser.ts), rather than a browser start per bot. Default false: tests of a
   * bot browser's death or process need their own.
   */
  sharedBotBrowser?: boolean;
}

/** A wait's own deadline and what it waits for, for the failure's message. */
export interface WaitBound {
  within: number;
  what: string;
}

const POLL_MS = 200;

/** Polls `read` until `done` holds; past `bound.within`, fails with `bound.what` and the last reading. */
async function poll<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  assertOpen: () => void,
  bound: WaitBound | undefined,
): Promise<T> {
  const deadline = bound ? Date.now() + bound.within : Number.POSITIVE_INFINITY;
  for (;;) {
    assertOpen();
    const value = await read();
    if (done(value)) return value;
    if (bound && Date.now() > deadline)
      throw new Error(`waited ${bound.within} ms for ${bound.what}; last reading: ${JSON.stringify(value)}`);
    await sleep(POLL_MS);
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A Chromium participant in the test room at `roomUrl`, speaking `wav` in a loop (or silent-ish without one). */
export async function launchParticipant(
  roomUrl: string,
  name: string,
  dir: string,
  wav?: string,
  query: Record<string, string> = {},
): Promise<Participant> {
  const browser = await launchParticipantBrowser(name, dir, wav);
  const close = (): Promise<void> => closeBrowser(browser);
  try {
    const page = (await browser.pages())[0] ?? (await browser.newPage());
    await enterRoom(page, roomUrl, name, query);
    return { name, page, browser, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A participant's Chromium: headless, its microphone `wav` in a loop (or the fake device's beep). */
function launchParticipantBrowser(name: string, dir: string, wav?: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    userDataDir: mkdtempSync(join(dir, `profile-${name}-`)),
    args: [
      ...BOT_CHROMIUM_ARGS,
      "--use-fake-device-for-media-stream",
      ...(wav ? [`--use-file-for-fake-audio-capture=${wav}`] : []),
    ],
  });
}

async function closeBrowser(browser: Browser): Promise<void> {
  await browser.close().catch(() => {});
  const proc = browser.process();
  if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
}

/** Opens the test room in `page` as `name` and waits until the page is in the call. */
async function enterRoom(
  page: Page,
  roomUrl: string,
  name: string,
  query: Record<string, string> = {},
): Promise<void> {
  await page.goto(`${roomUrl}?${new URLSearchParams({ ...query, name }).toString()}`);
  await page.waitForFunction(`document.body.dataset.state === "in_call"`);
}

/** `config` is merged into the server's configuration (e.g. `agent.endpoint`). */
export async function startMeetingsHarness(
  meetings: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
  options: MeetingsHarnessOptions = {},
): Promise<MeetingsHarness> {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-meetings-"));
  const loaded = validateConfig({
    server: { port: 0 },
    dataDir: join(dir, "data"),
    log: { level: process.env["MEETINGS_LOG"] ?? "silent" },
    // The participants and bots meet in the local test room (on by default here: loopback, no auth).
    meetings: { pollIntervalMs: 200, testRoom: { enabled: true }, ...meetings },
    ...config,
  });
  const botBrowser = options.sharedBotBrowser ? new SharedBotBrowser() : undefined;
  const app = await createApp(loaded, botBrowser ? { meetingBrowsers: botBrowser } : {});
  const { port } = await app.listen({ port: 0 });
  const baseUrl = `http://127.0.0.1:${port}`;
  const participants = new Set<Participant>();
  const pageQuery: Record<string, string> = options.levelMeters === false ? { levels: "off" } : {};
  const participantQuery: Record<string, string> = {
    ...pageQuery,
    ...(options.participantsListen === false ? { audio: "off" } : {}),
  };
  const roomBase = (room: string): string => `${baseUrl}/meetings/test-room/${room}`;
  let guestBrowser: Promise<Browser> | undefined;
  let closed = false;
  // Polling loops stop with the harness, so a timed-out test leaves nothing running.
  const assertOpen = (): void => {
    if (closed) throw new Error("meetings harness closed");
  };

  const harness: MeetingsHarness = {
    app,
    baseUrl,
    dir,
    roomUrl: (room, query = {}) => {
      const search = new URLSearchParams({ ...pageQuery, ...query }).toString();
      return search ? `${roomBase(room)}?${search}` : roomBase(room);
    },
    async participant(room, name, wav, query) {
      const p = await launchParticipant(roomBase(room), name, dir, wav, { ...participantQuery, ...query });
      const close = p.close;
      p.close = async () => {
        participants.delete(p);
        await close();
      };
      participants.add(p);
      return p;
    },
    async guest(room, name, query) {
      // A silent microphone: without a file Chromium's fake device beeps, which bots would caption.
      guestBrowser ??= launchParticipantBrowser("guests", dir, silenceWav(dir));
      const browser = await guestBrowser;
      const page = await browser.newPage();
      const p: Participant = {
        name,
        page,
        browser,
        close: async () => {
          participants.delete(p);
          await page.close().catch(() => {});
        },
      };
      participants.add(p);
      try {
        await enterRoom(page, roomBase(room), name, { ...participantQuery, ...query });
      } catch (err) {
        await p.close();
        throw err;
      }
      return p;
    },
    async post(body) {
      const res = await fetch(`${baseUrl}/meetings/bots`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as BotStatus & { error?: { code: string } } };
    },
    async status(id) {
      return (await (await fetch(`${baseUrl}/meetings/bots/${id}`)).json()) as BotStatus;
    },
    async transcript(id) {
      return (
        (await (await fetch(`${baseUrl}/meetings/bots/${id}/transcript`)).json()) as {
          lines: TranscriptLine[];
        }
      ).lines;
    },
    waitFor: (id, done, bound) => poll(() => harness.status(id), done, assertOpen, bound),
    waitForTranscript: (id, done, bound) => poll(() => harness.transcript(id), done, assertOpen, bound),
    async close() {
      closed = true;
      await Promise.allSettled([...participants].map((p) => p.close()));
      if (guestBrowser) await guestBrowser.then(closeBrowser, () => {});
      await app.close();
      await botBrowser?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** The lowercase words of every line of one speaker (punctuation dropped: Moonshine writes "Go forward."). */
export function wordsOf(lines: TranscriptLine[], speaker: string): Set<string> {
  return new Set(lines.filter((l) => l.speaker === speaker).flatMap((l) => wordList(l.text)));
}

/** A caption's lowercase words, without punctuation. */
export function wordList(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}']+/u)
    .filter((w) => w !== "");
}

/** A raw Talk API connection: `call` sends a request and resolves with its response frame; `events` collects event frames. */
export interface RawTalkConnection {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  call(method: string, params?: unknown): Promise<any>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: { event: string; payload: any }[];
}

/** Opens /talk on `baseUrl` with a bearer token; the socket is pushed to `sockets` for the test to close. */
export async function connectTalk(
  baseUrl: string,
  token: string,
  sockets: WebSocket[],
): Promise<RawTalkConnection> {
  const ws = new WebSocket(`${baseUrl.replace("http", "ws")}/talk`, ["talkgate", `bearer.${token}`]);
  sockets.push(ws);
  const events: RawTalkConnection["events"] = [];
  const pending = new Map<string, (frame: unknown) => void>();
  ws.on("message", (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === "res") pending.get(frame.id)?.(frame);
    else if (frame.type === "event") events.push(frame);
  });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let n = 0;
  return {
    events,
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = `r${++n}`;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ type: "req", id, method, params }));
      }),
  };
}
