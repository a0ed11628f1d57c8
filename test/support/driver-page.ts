/**
 * A platform driver against a page a test opened itself: the bot's own
 * DriverPage (real input: CDP mouse and keyboard), the phase a reading
 * means, and the act of the screen the page shows (what the bot's join
 * state machine would run).
 */
import type { Page } from "puppeteer-core";
import type { LaunchedBrowser } from "../../src/meetings/bot/browser-launcher.js";
import { driverPage } from "../../src/meetings/bot/bot-page.js";
import type {
  DriverPage,
  JoinContext,
  MeetingObservation,
  MeetingPhase,
  PlatformDriver,
} from "../../src/meetings/platforms/platform-driver.js";

export function testDriverPage(page: Page): DriverPage {
  return driverPage({ page } as unknown as LaunchedBrowser);
}

/** What the driver's reading means for the lifecycle ("joining" for an unknown screen). */
export function phaseOf(driver: PlatformDriver, seen: MeetingObservation): MeetingPhase {
  return driver.screens[seen.screen]?.phase ?? "joining";
}

/** Reads the page and runs the act of the screen it shows, as the bot would; answers the screen. */
export async function actOnScreen(
  driver: PlatformDriver,
  page: DriverPage,
  context: JoinContext,
): Promise<string> {
  const seen = await driver.observe(page, context);
  await driver.screens[seen.screen]?.act?.(page, context);
  return seen.screen;
}

/** A join context: transcribe mode (microphone and camera off). */
export function joinContext(botName: string, wants = { microphone: false, camera: false }): JoinContext {
  return { botName, signal: new AbortController().signal, wants };
}
