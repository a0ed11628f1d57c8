/**
 * The whole bot against the Zoom / Teams simulators: the app (meetings
 * harness: real Chromium bots, headed on Xvfb, capture, local speech
 * recognition), the simulator, and one test Chromium for the meetings'
 * media cores (shared by every meeting of a test file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { BOT_CHROMIUM_ARGS } from "../../../src/meetings/index.js";
import {
  startMeetingsHarness,
  type MeetingsHarness,
  type MeetingsHarnessOptions,
} from "../../integration/meetings-harness.js";
import { startMeetingSimulator, type MeetingSimulator, type SimMeeting } from "./sim-server.js";

export interface SimHarness {
  h: MeetingsHarness;
  sim: MeetingSimulator;
  /** Opens the meeting's media core page (its participants' audio, the bot's microphone measured). */
  core(meeting: SimMeeting): Promise<Page>;
  close(): Promise<void>;
}

export async function startSimHarness(
  meetings: (origin: string) => Record<string, unknown>,
  config: Record<string, unknown> = {},
  options: MeetingsHarnessOptions = {},
): Promise<SimHarness> {
  const sim = await startMeetingSimulator();
  const h = await startMeetingsHarness(meetings(sim.origin), config, options);
  const profile = mkdtempSync(join(tmpdir(), "talkgate-sim-core-"));
  let browser: Browser | undefined;
  return {
    h,
    sim,
    async core(meeting) {
      browser ??= await puppeteer.launch({
        executablePath: "/usr/bin/chromium",
        headless: true,
        userDataDir: profile,
        args: [...BOT_CHROMIUM_ARGS],
      });
      const page = await browser.newPage();
      await page.goto(sim.coreUrl(meeting));
      await page.waitForFunction("window.simCore && window.simCore.ready()");
      return page;
    },
    async close() {
      await h.close();
      await browser?.close().catch(() => {});
      const proc = browser?.process();
      if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await sim.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 200 ms until it holds; after `within` ms fails naming `what`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  within = 30_000,
): Promise<void> {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${within} ms for ${what}`);
    await sleep(200);
  }
}
