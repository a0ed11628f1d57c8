import { readFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { GoogleMeetDriver } from "../../src/meetings/platforms/google-meet/meet-driver.js";
import type { DriverPage } from "../../src/meetings/platforms/platform-driver.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/meet");

/**
 * Google Meet cannot be reached from here: the driver runs against saved,
 * reduced Meet pages in a real Chromium (1 process).
 */
describe("Google Meet driver against saved page fixtures", () => {
  let browser: Browser;
  let page: Page;
  let profile: string;
  const driver = new GoogleMeetDriver();
  const context = { botName: "Notetaker", signal: new AbortController().signal };

  const driverPage = (): DriverPage => ({
    evaluate: <T>(script: string) => page.evaluate(script) as Promise<T>,
    click: (selector) => page.click(selector),
    type: (selector, text) => page.type(selector, text),
    url: () => page.url(),
  });
  const load = (name: string) => page.setContent(readFileSync(join(FIXTURES, name), "utf8"));

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "talkgate-meet-fixtures-"));
    browser = await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      userDataDir: profile,
      args: [...BOT_CHROMIUM_ARGS],
    });
    page = (await browser.pages())[0] ?? (await browser.newPage());
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  it("handles meet.google.com URLs and pins the English locale", () => {
    expect(driver.matches(new URL("https://meet.google.com/abc-defg-hij"))).toBe(true);
    expect(driver.matches(new URL("https://meet.example.org/abc-defg-hij"))).toBe(false);
    expect(
      new URL(driver.joinUrl(new URL("https://meet.google.com/abc-defg-hij"), "Bot")).searchParams.get("hl"),
    ).toBe("en");
  });

  it("enters the name, turns microphone and camera off, then asks to join and lands in the waiting room", async () => {
    await load("prejoin.html");
    expect((await driver.observe(driverPage(), context)).phase).toBe("joining");
    await driver.join(driverPage(), context);
    expect(await page.evaluate("window.fixtureLog")).toEqual(["mic-off", "camera-off", "ask:Notetaker"]);
    expect((await driver.observe(driverPage(), context)).phase).toBe("waiting_room");
  });

  it("treats waiting-room text as a veto even when call controls are rendered", async () => {
    await load("waiting-room.html");
    expect((await driver.observe(driverPage(), context)).phase).toBe("waiting_room");
  });

  it("is admitted by the in-call roster and lists the others, never itself", async () => {
    await load("in-call.html");
    const seen = await driver.observe(driverPage(), context);
    expect(seen.phase).toBe("in_call");
    expect(seen.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
    // Meet mixes audio streams: no track can be attributed from the page.
    expect(seen.speakers).toEqual({});
    await load("alone.html");
    expect((await driver.observe(driverPage(), context)).participants).toEqual([]);
  });

  it.each([
    ["denied.html", "denied"],
    ["removed.html", "removed"],
    ["ended.html", "ended"],
    ["not-found.html", "not_found"],
    ["sign-in.html", "sign_in_required"],
  ])("reads %s as %s", async (fixture, phase) => {
    await load(fixture);
    expect((await driver.observe(driverPage(), context)).phase).toBe(phase);
  });

  it("leaves with the Leave call button", async () => {
    await load("in-call.html");
    await driver.leave(driverPage());
    expect((await driver.observe(driverPage(), context)).phase).toBe("ended");
  });
});
