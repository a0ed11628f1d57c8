import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { TalkError } from "../../core/index.js";

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
}

/** Flags every bot browser gets: headless, quiet, no sandbox (containers), real media stack. */
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
  // Host candidates as IPs, not mDNS names: the loopback test meeting has no resolver for those.
  // The audio service in the browser process, not a process of its own: ~20 MB PSS less per bot, same CPU
  // (docs/notes/performance-history.md, "Meetings").
  "--disable-features=WebRtcHideLocalIpsWithMdns,AudioServiceOutOfProcess",
  // One renderer: no spare renderer kept warm, and the camera URL page shares it (~30 MB PSS less).
  "--renderer-process-limit=1",
]);

/**
 * Launches Debian Chromium through puppeteer-core, headless, with a fresh
 * profile directory per bot (removed on close).
 */
export class ChromiumLauncher implements BrowserLauncher {
  readonly #executablePath: string;
  readonly #locale: string;

  constructor(options: ChromiumLauncherOptions = {}) {
    this.#executablePath = options.executablePath ?? "/usr/bin/chromium";
    this.#locale = options.locale ?? "en-US";
    if (!this.#executablePath)
      throw new TalkError("config_invalid", "ChromiumLauncher.executablePath must be a path");
  }

  async launch(request: LaunchRequest): Promise<LaunchedBrowser> {
    request.signal.throwIfAborted();
    const label = (request.label ?? "").replace(/[^A-Za-z0-9-]/g, "").slice(0, 64);
    const profile = await mkdtemp(join(tmpdir(), `talkgate-bot-${label}${label ? "-" : ""}`));
    let browser: Browser | undefined;
    try {
      // Loaded on the first bot, not at start: puppeteer-core is ~470 modules and ~24 MB of a process that may
      // never join a meeting (a relay-only worker; measured in docs/performance.md).
      const { default: puppeteer } = await import("puppeteer-core");
      browser = await puppeteer.launch({
        executablePath: this.#executablePath,
        headless: true,
        userDataDir: profile,
        args: [...BOT_CHROMIUM_ARGS, `--lang=${this.#locale}`, ...(request.extraArgs ?? [])],
        env: { ...process.env, LANG: this.#locale.replace("-", "_") + ".UTF-8" },
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      if (request.signal.aborted) throw request.signal.reason;
      const [existing] = await browser.pages();
      const page = existing ?? (await browser.newPage());
      await page.setExtraHTTPHeaders({ "accept-language": this.#locale });
      await page.evaluateOnNewDocument(request.initScript);
      return new PuppeteerBrowser(browser, page, profile);
    } catch (err) {
      await killBrowser(browser);
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
  readonly #crash = new AbortController();
  #closing: Promise<void> | undefined;

  constructor(browser: Browser, page: Page, profile: string) {
    this.#browser = browser;
    this.page = page;
    this.#profile = profile;
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
