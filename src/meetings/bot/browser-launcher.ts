import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { TalkError } from "../../core/index.js";
import { DisplayPool } from "./virtual-display.js";

/** A launched browser as the bot uses it: one page, a crash signal, one close. */
export interface LaunchedBrowser {
  readonly page: Page;
  /** OS process id (tests kill it to simulate a crash). */
  readonly pid: number | undefined;
  /** Aborted when the browser dies or disconnects for any reason other than close(). */
  readonly crashed: AbortSignal;
  /** Kills the browser and removes its profile directory. Idempotent; the browser always dies. */
  close(): Promise<void>;
}

export interface LaunchRequest {
  /** Script evaluated in every document before any page script. */
  initScript: string;
  /** Names the profile directory (the bot id), so an operator can tell bot browsers apart. */
  label?: string;
  /** Extra Chromium flags (test participants use fake devices). */
  extraArgs?: readonly string[];
  signal: AbortSignal;
}

/** Narrow on purpose: the bot needs a page, not puppeteer. Tests and other engines implement it. */
export interface BrowserLauncher {
  launch(request: LaunchRequest): Promise<LaunchedBrowser>;
}

export interface ChromiumLauncherOptions {
  /** Default "/usr/bin/chromium". */
  executablePath?: string;
  /** Page language pinned for every platform (drivers match UI texts). Default "en-US". */
  locale?: string;
  /**
   * Headless Chromium instead of a headed one on Xvfb: development only. A
   * headless browser tells pages what it is (its user agent, its rendering);
   * the live platforms refuse or degrade it (docs/meetings.md, "The bot's
   * browser"). Default false.
   */
  headless?: boolean;
  /** Where headed browsers draw: one shared Xvfb (default) or one per bot. */
  displays?: DisplayPool;
}

/** Flags every bot browser gets: quiet, no sandbox (containers), real media stack, nothing that says "automated". */
export const BOT_CHROMIUM_ARGS = Object.freeze([
  "--no-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--autoplay-policy=no-user-gesture-required",
  // The bot's microphone is a Web Audio node, not a device: nothing to ask permission for.
  "--use-fake-ui-for-media-stream",
  // Devices the page can enumerate (Meet and Teams warn "Microphone not found" without any: screenappai/meeting-bot
  // src/bots/GoogleMeetBot.ts); what getUserMedia answers is still our override (capture-script.ts).
  "--use-fake-device-for-media-stream",
  // navigator.webdriver stays false: the maintained bots all launch so (attendee-labs/attendee
  // bots/web_bot_adapter/web_bot_adapter.py, Meeting-BaaS/meet-teams-bot src/browser.ts).
  "--disable-blink-features=AutomationControlled",
  // Host candidates as IPs, not mDNS names: the loopback test meeting has no resolver for those.
  // The audio service in the browser process, not a process of its own: ~20 MB PSS less per bot, same CPU
  // (docs/notes/performance-history.md, "Meetings").
  "--disable-features=WebRtcHideLocalIpsWithMdns,AudioServiceOutOfProcess",
  // One renderer: no spare renderer kept warm, and the camera URL page shares it (~30 MB PSS less).
  "--renderer-process-limit=1",
]);

/**
 * puppeteer's own defaults a bot must not have: `--enable-automation` (the
 * "controlled by automated software" bar and navigator.webdriver; excluded by
 * attendee's and screenappai's launchers alike) and its headless flags.
 */
export const IGNORED_PUPPETEER_ARGS = Object.freeze(["--enable-automation"]);

/** The window a headed bot browser opens (Xvfb's screen is the same size). */
export const BOT_WINDOW = Object.freeze({ width: 1280, height: 720 });

/**
 * Launches Debian Chromium through puppeteer-core, headed on a virtual
 * display (Xvfb) unless `headless` is asked for, with a fresh profile
 * directory per bot (removed on close).
 */
export class ChromiumLauncher implements BrowserLauncher {
  readonly #executablePath: string;
  readonly #locale: string;
  readonly #headless: boolean;
  readonly #displays: DisplayPool;

  constructor(options: ChromiumLauncherOptions = {}) {
    this.#executablePath = options.executablePath ?? "/usr/bin/chromium";
    this.#locale = options.locale ?? "en-US";
    this.#headless = options.headless ?? false;
    this.#displays = options.displays ?? new DisplayPool("shared");
    if (!this.#executablePath)
      throw new TalkError("config_invalid", "ChromiumLauncher.executablePath must be a path");
  }

  async launch(request: LaunchRequest): Promise<LaunchedBrowser> {
    request.signal.throwIfAborted();
    const label = (request.label ?? "").replace(/[^A-Za-z0-9-]/g, "").slice(0, 64);
    const profile = await mkdtemp(join(tmpdir(), `talkgate-bot-${label}${label ? "-" : ""}`));
    let browser: Browser | undefined;
    let display: { display: string; release(): Promise<void> } | undefined;
    try {
      if (!this.#headless) display = await this.#displays.acquire();
      // Loaded on the first bot, not at start: puppeteer-core is ~470 modules and ~24 MB of a process that may
      // never join a meeting (a relay-only worker; measured in docs/performance.md).
      const { default: puppeteer } = await import("puppeteer-core");
      browser = await puppeteer.launch({
        executablePath: this.#executablePath,
        headless: this.#headless,
        userDataDir: profile,
        ignoreDefaultArgs: [...IGNORED_PUPPETEER_ARGS],
        defaultViewport: null,
        args: [
          ...BOT_CHROMIUM_ARGS,
          `--lang=${this.#locale}`,
          `--window-size=${BOT_WINDOW.width},${BOT_WINDOW.height}`,
          "--window-position=0,0",
          ...(this.#headless ? [`--user-agent=${await headlessAsChrome(this.#executablePath)}`] : []),
          ...(request.extraArgs ?? []),
        ],
        env: {
          ...process.env,
          LANG: this.#locale.replace("-", "_") + ".UTF-8",
          ...(display ? { DISPLAY: display.display } : {}),
        },
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      if (request.signal.aborted) throw request.signal.reason;
      const [existing] = await browser.pages();
      const page = existing ?? (await browser.newPage());
      await page.setExtraHTTPHeaders({ "accept-language": this.#locale });
      await page.evaluateOnNewDocument(request.initScript);
      return new PuppeteerBrowser(browser, page, profile, display);
    } catch (err) {
      await killBrowser(browser);
      await display?.release();
      await rm(profile, { recursive: true, force: true }).catch(() => {});
      if (request.signal.aborted)
        throw new TalkError("cancelled", "Browser launch cancelled.", { cause: err });
      throw new TalkError("provider_unavailable", `Chromium did not start: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}

class PuppeteerBrowser implements LaunchedBrowser {
  readonly page: Page;
  readonly pid: number | undefined;
  readonly #browser: Browser;
  readonly #profile: string;
  readonly #display: { release(): Promise<void> } | undefined;
  readonly #crash = new AbortController();
  #closing: Promise<void> | undefined;

  constructor(
    browser: Browser,
    page: Page,
    profile: string,
    display: { release(): Promise<void> } | undefined,
  ) {
    this.#browser = browser;
    this.page = page;
    this.#profile = profile;
    this.#display = display;
    this.pid = browser.process()?.pid;
    browser.on("disconnected", () => {
      if (!this.#closing) this.#crash.abort(new TalkError("internal", "The browser disconnected."));
    });
    page.on("error", () => {
      if (!this.#closing) this.#crash.abort(new TalkError("internal", "The page crashed."));
    });
  }

  get crashed(): AbortSignal {
    return this.#crash.signal;
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await killBrowser(this.#browser);
      await this.#display?.release().catch(() => {});
      await rm(this.#profile, { recursive: true, force: true }).catch(() => {});
    })();
    return this.#closing;
  }
}

/** Closes politely, then SIGKILLs whatever is left: a bot's browser must never outlive it. */
async function killBrowser(browser: Browser | undefined): Promise<void> {
  if (!browser) return;
  const proc = browser.process();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      browser.close(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 3000);
      }),
    ]);
  } catch {
    // Already gone.
  } finally {
    clearTimeout(timer);
  }
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    proc.kill("SIGKILL");
    await new Promise((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) resolve(undefined);
      else proc.once("exit", resolve);
    });
  }
}

let chromeUserAgent: Promise<string> | undefined;

/**
 * Headless (development) only: the user agent of the same Chromium headed,
 * "HeadlessChrome/<v>" written as "Chrome/<v>", read once from `chromium --version`.
 */
function headlessAsChrome(executablePath: string): Promise<string> {
  chromeUserAgent ??= (async () => {
    const { execFile } = await import("node:child_process");
    const version = await new Promise<string>((resolve) =>
      execFile(executablePath, ["--version"], { timeout: 10_000 }, (_err, out) =>
        resolve(/(\d+)\.\d+\.\d+\.\d+/.exec(String(out))?.[1] ?? "130"),
      ),
    );
    // Chromium's reduced user agent: the major version only, the rest zeros.
    return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0 Safari/537.36`;
  })();
  return chromeUserAgent;
}
