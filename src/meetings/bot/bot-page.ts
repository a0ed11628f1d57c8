import type { DriverPage } from "../platforms/platform-driver.js";
import type { LaunchedBrowser } from "./browser-launcher.js";
import { fatal } from "./bot-outcome.js";

/** Navigation errors that mean the meeting address leads nowhere. */
const NOT_FOUND_NET_ERRORS =
  /ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED|ERR_ADDRESS_UNREACHABLE|ERR_INVALID_URL/;

/**
 * Opens the meeting's join URL. An address that leads nowhere (or answers
 * 404 / 410) ends the bot as meeting_not_found, any other navigation failure
 * as blocked_by_platform. `throwIfGone` runs first on a failure (the bot was
 * asked to leave, or its browser died, while navigating).
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
    if (NOT_FOUND_NET_ERRORS.test(message)) throw fatal("meeting_not_found", message);
    throw fatal("blocked_by_platform", message);
  }
  if (status === 404 || status === 410) throw fatal("meeting_not_found", `HTTP ${status}`);
}

/** The browser's page as a platform driver sees it. */
export function driverPage(browser: LaunchedBrowser): DriverPage {
  const page = browser.page;
  return {
    evaluate: <T>(script: string) => page.evaluate(script) as Promise<T>,
    click: (selector) => page.click(selector),
    type: (selector, text) => page.type(selector, text),
    url: () => page.url(),
  };
}
