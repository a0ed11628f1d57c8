import type { CDPSession, HTTPRequest, Page } from "puppeteer-core";
import type { TalkLogger } from "../../core/index.js";

/**
 * The bot camera's `url` mode: the configured page opened in a second
 * window of the bot's own browser (both pages stay visible), its screencast (CDP `Page.startScreencast`,
 * JPEG, scaled down) pushed into the meeting page, where the capture script
 * draws the newest frame on the canvas it sends as the camera (no virtual
 * camera device). Frames are acknowledged only when pushed, so Chromium
 * renders no faster than `fps`; a static page sends one frame and nothing
 * more. The camera page may navigate only within the allowed origins.
 */
export interface CameraPageOptions {
  /** The page to show (already checked against `allowedOrigins`). */
  url: string;
  /** Origins the page (and any navigation of its main frame) may load from. */
  allowedOrigins: readonly string[];
  /** Frames a second pushed at most. */
  fps: number;
  /** The page's viewport (CSS pixels); frames are scaled to `frameWidth` x `frameHeight`. */
  viewport?: { width: number; height: number };
  frameWidth?: number;
  frameHeight?: number;
  /** Navigation timeout, ms. */
  timeoutMs: number;
  logger: TalkLogger;
  botId: string;
}

export interface CameraPage {
  /** Frames pushed so far (tests, diagnostics). */
  readonly framesPushed: number;
  /** Stops the screencast and closes the camera page. Idempotent; never throws. */
  close(): Promise<void>;
}

/** Whether `url` is http(s) on one of `origins` (exact origin match). */
export function isAllowedCameraUrl(url: string, origins: readonly string[]): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === "http:" || u.protocol === "https:") && origins.includes(u.origin);
  } catch {
    return false;
  }
}

interface ScreencastFrame {
  data: string;
  sessionId: number;
}

/** Opens the camera page beside `meetingPage` and streams its frames into it. */
export async function startCameraPage(meetingPage: Page, options: CameraPageOptions): Promise<CameraPage> {
  // A window of its own, not a tab: a tab beside the meeting would hide one of the two (the meeting page
  // would be "hidden" to its platform and throttled, or a hidden camera page sends no screencast frames).
  const page = await meetingPage.browser().newPage({ type: "window" });
  let cdp: CDPSession | undefined;
  const ticker: { timer?: NodeJS.Timeout } = {};
  let closing: Promise<void> | undefined;
  let latest: ScreencastFrame | undefined;
  let lastPushed: string | undefined;
  let lastPushAt = 0;
  let pushing = false;
  let framesPushed = 0;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(ticker.timer);
      await cdp?.send("Page.stopScreencast").catch(() => {});
      await page.close().catch(() => {});
    })();
    return closing;
  };
  try {
    await page.setViewport(options.viewport ?? { width: 640, height: 360 });
    // Main-frame navigations stay on the allowed origins (a redirect or a link elsewhere is aborted).
    await page.setRequestInterception(true);
    page.on("request", (request: HTTPRequest) => {
      const leaves =
        request.isNavigationRequest() &&
        request.frame() === page.mainFrame() &&
        !isAllowedCameraUrl(request.url(), options.allowedOrigins);
      (leaves ? request.abort("blockedbyclient") : request.continue()).catch(() => {});
    });
    await page.goto(options.url, { waitUntil: "load", timeout: options.timeoutMs });
    cdp = await page.createCDPSession();
    cdp.on("Page.screencastFrame", (frame: ScreencastFrame) => {
      latest = frame;
    });
    await cdp.send("Page.startScreencast", {
      format: "jpeg",
      quality: 70,
      maxWidth: options.frameWidth ?? 320,
      maxHeight: options.frameHeight ?? 180,
      everyNthFrame: 1,
    });
  } catch (err) {
    await close();
    throw err;
  }
  const push = async (): Promise<void> => {
    if (pushing || closing) return;
    const frame = latest;
    // A static page sends no new frame: the last one is pushed again now and then (a re-rendered meeting page lost it).
    const data = frame?.data ?? (Date.now() - lastPushAt >= 2000 ? lastPushed : undefined);
    if (data === undefined) return;
    pushing = true;
    latest = undefined;
    try {
      await meetingPage.evaluate(
        `window.__talkgateCameraFrame ? window.__talkgateCameraFrame(${JSON.stringify(data)}) : false`,
      );
      framesPushed++;
      lastPushed = data;
      lastPushAt = Date.now();
    } catch (err) {
      // The meeting page navigating: the next tick pushes again.
      options.logger.debug({ err, botId: options.botId }, "meeting: camera frame not pushed");
    } finally {
      pushing = false;
      // Acknowledged once pushed: Chromium sends the next frame only then.
      if (frame) await cdp?.send("Page.screencastFrameAck", { sessionId: frame.sessionId }).catch(() => {});
    }
  };
  ticker.timer = setInterval(() => void push(), Math.max(33, Math.round(1000 / options.fps)));
  return {
    get framesPushed() {
      return framesPushed;
    },
    close,
  };
}
