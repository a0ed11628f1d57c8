import type { Page } from "puppeteer-core";
import type { DriverPage } from "../platforms/platform-driver.js";
import { findTargetScript, type ClickTarget } from "../platforms/real-input.js";
import type { LaunchedBrowser } from "./browser-launcher.js";
import { fatal } from "./bot-outcome.js";

/** Navigation errors that mean the meeting address leads nowhere. */
const NOT_FOUND_NET_ERRORS =
  /ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED|ERR_ADDRESS_UNREACHABLE|ERR_INVALID_URL/;

/**
 * Opens the meeting's join URL. An address that leads nowhere (or answers
 * 404 / 410) ends the bot as meeting_not_found, any other navigation failure
 * as blocked_by_platform. The message names the kind of failure, never what
 * the network said (only platform hosts reach here: the driver checked the
 * address, docs/operations.md). `throwIfGone` runs first on a failure (the
 * bot was asked to leave, or its browser died, while navigating).
 */
export async function openMeetingPage(
  browser: LaunchedBrowser,
  url: string,
  timeoutMs: number,
  throwIfGone: () => void,
): Promise<void> {
  let status: number | undefined;
  try {
    const response = await browser.page.goto(url, { waitUntil: "domcontentloaded", timeout: timeoutMs });
    status = response?.status();
  } catch (err) {
    throwIfGone();
    const message = (err as Error).message;
    if (NOT_FOUND_NET_ERRORS.test(message))
      throw fatal("meeting_not_found", "The meeting page could not be reached.");
    throw fatal("blocked_by_platform", "The meeting page did not load.");
  }
  if (status === 404 || status === 410) throw fatal("meeting_not_found", "The meeting page was not found.");
}

/** A short pause between a press and its release, as a hand makes (ms). */
const PRESS_MS = 40;

/** Clicks a target found in the page with real input: CDP mouse move (in steps), press, release. */
async function clickAt(page: Page, target: ClickTarget): Promise<void> {
  await page.mouse.move(target.x, target.y, { steps: 4 });
  await page.mouse.down();
  await new Promise((r) => setTimeout(r, PRESS_MS));
  await page.mouse.up();
}

/**
 * The browser's page as a platform driver sees it. Every click and keystroke
 * is a real input event (CDP `Input.dispatchMouseEvent` / `dispatchKeyEvent`
 * through puppeteer's mouse and keyboard), so the page sees `isTrusted`
 * events; nothing is clicked with `el.click()` inside the page.
 */
export function driverPage(browser: LaunchedBrowser): DriverPage {
  const page = browser.page;
  const find = (query: Parameters<typeof findTargetScript>[0]): Promise<ClickTarget | null> =>
    page.evaluate(findTargetScript(query)) as Promise<ClickTarget | null>;
  return {
    evaluate: <T>(script: string) => page.evaluate(script) as Promise<T>,
    async click(selector, options) {
      const target = await find({ selector, ...(options?.within ? { within: options.within } : {}) });
      if (!target) return false;
      await clickAt(page, target);
      return true;
    },
    async clickText(texts, options) {
      const target = await find({
        texts,
        ...(options?.within ? { within: options.within } : {}),
        ...(options?.match ? { match: options.match } : {}),
      });
      if (!target) return null;
      await clickAt(page, target);
      return target.text ?? null;
    },
    async type(selector, text) {
      const target = await find({ selector, editable: true });
      if (!target) return false;
      await clickAt(page, target);
      // Replace what the field holds: select all, then type over it, key by key.
      await page.keyboard.down("Control");
      await page.keyboard.press("KeyA");
      await page.keyboard.up("Control");
      if (text === "") await page.keyboard.press("Backspace");
      else await page.keyboard.type(text, { delay: 15 });
      return true;
    },
    press: (key) => page.keyboard.press(key as Parameters<Page["keyboard"]["press"]>[0]),
    screenshot: async () => await page.screenshot({ type: "png" }),
    wake: async () => {
      // Meet hides its toolbar without pointer movement (Vexa-ai/vexa
      // core/meetings/modules/join/src/googlemeet/admission.ts): a real move shows it again.
      await page.mouse.move(600, 340, { steps: 2 });
      await page.mouse.move(607, 345, { steps: 2 });
    },
    url: () => page.url(),
  };
}
