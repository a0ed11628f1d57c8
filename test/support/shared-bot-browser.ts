/**
 * One bot browser for a test file's bots (CreateAppOptions.meetingBrowsers):
 * the first bot's launch starts Debian Chromium through the product's own
 * launcher (ChromiumLauncher: the bot's flags, headed on its Xvfb display),
 * and each bot then gets a browser context of its own in it (its own
 * cookies and storage, its own window of the bot's size) with its init
 * script, where production starts a browser per bot. A bot's page, and what
 * it does there (joining, capture, speech), is the product's code as it
 * runs per bot; only the start and the end differ: a bot's close closes its
 * context, and its crash signal is its page's or the shared browser's.
 * Tests of a bot browser's death or process (meetings-lifecycle) keep a
 * browser per bot, as do bots launched with flags of their own.
 */
import type { BrowserContext, Page } from "puppeteer-core";
import { TalkError } from "../../src/core/index.js";
import {
  BOT_WINDOW,
  ChromiumLauncher,
  type BrowserLauncher,
  type LaunchedBrowser,
  type LaunchRequest,
} from "../../src/meetings/bot/browser-launcher.js";

export class SharedBotBrowser implements BrowserLauncher {
  readonly #launcher = new ChromiumLauncher();
  #shared: Promise<LaunchedBrowser> | undefined;
  #closed = false;

  async launch(request: LaunchRequest): Promise<LaunchedBrowser> {
    request.signal.throwIfAborted();
    if (this.#closed) throw new TalkError("provider_unavailable", "The shared bot browser is closed.");
    // Flags are a browser's own: a bot that asks for some gets a browser of its own.
    if (request.extraArgs && request.extraArgs.length > 0) return this.#launcher.launch(request);
    const shared = await this.#browser();
    const browser = shared.page.browser();
    let context: BrowserContext | undefined;
    try {
      context = await browser.createBrowserContext();
      const page = await context.newPage();
      await fitWindow(page);
      await page.setExtraHTTPHeaders({ "accept-language": "en-US" });
      await page.evaluateOnNewDocument(request.initScript);
      if (request.signal.aborted) throw request.signal.reason;
      return new BotContext(context, page, shared);
    } catch (err) {
      await context?.close().catch(() => {});
      if (request.signal.aborted)
        throw new TalkError("cancelled", "Browser launch cancelled.", { cause: err });
      throw new TalkError("provider_unavailable", `Chromium did not start: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Closes the shared browser (after the app, whose bots have closed their contexts). */
  async close(): Promise<void> {
    this.#closed = true;
    const shared = this.#shared;
    this.#shared = undefined;
    await (await shared?.catch(() => undefined))?.close();
  }

  /** The shared browser, started on first use and again if it died. */
  async #browser(): Promise<LaunchedBrowser> {
    const current = await this.#shared?.catch(() => undefined);
    if (current && !current.crashed.aborted) return current;
    await current?.close();
    this.#shared = this.#launcher.launch({
      initScript: "",
      label: "shared",
      signal: new AbortController().signal,
    });
    return this.#shared;
  }
}

/** A new context's window opens at Chromium's default size: the bot's is BOT_WINDOW, as its own browser's. */
async function fitWindow(page: Page): Promise<void> {
  const cdp = await page.createCDPSession();
  try {
    const { windowId } = (await cdp.send("Browser.getWindowForTarget")) as { windowId: number };
    await cdp.send("Browser.setWindowBounds", {
      windowId,
      bounds: { left: 0, top: 0, width: BOT_WINDOW.width, height: BOT_WINDOW.height, windowState: "normal" },
    });
  } finally {
    await cdp.detach().catch(() => {});
  }
}

class BotContext implements LaunchedBrowser {
  readonly page: Page;
  readonly pid: number | undefined;
  readonly #context: BrowserContext;
  readonly #crash = new AbortController();
  #closing: Promise<void> | undefined;

  constructor(context: BrowserContext, page: Page, shared: LaunchedBrowser) {
    this.#context = context;
    this.page = page;
    this.pid = shared.pid;
    const crash = (why: string): void => {
      if (!this.#closing && !this.#crash.signal.aborted) this.#crash.abort(new TalkError("internal", why));
    };
    page.on("error", () => crash("The page crashed."));
    if (shared.crashed.aborted) crash("The browser disconnected.");
    else shared.crashed.addEventListener("abort", () => crash("The browser disconnected."), { once: true });
  }

  get crashed(): AbortSignal {
    return this.#crash.signal;
  }

  close(): Promise<void> {
    this.#closing ??= this.#context.close().catch(() => {});
    return this.#closing;
  }
}
