import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { SpeakerAttribution } from "../../src/meetings/bot/speaker-attribution.js";
import { Utterance } from "../../src/meetings/bot/utterance-segmenter.js";
import type { DriverPage, PlatformDriver } from "../../src/meetings/platforms/platform-driver.js";
import { joinContext, phaseOf, testDriverPage } from "../support/driver-page.js";
import { TeamsDriver } from "../../src/meetings/platforms/teams/teams-driver.js";
import { ZoomDriver } from "../../src/meetings/platforms/zoom/zoom-driver.js";

/**
 * Zoom's web client and Teams on the web cannot be reached from here: their
 * drivers run against saved, reduced pages (test/fixtures/zoom, teams) in a
 * real Chromium (1 process), like the Google Meet driver.
 */
describe("Zoom and Teams web drivers against saved page fixtures", () => {
  let browser: Browser;
  let page: Page;
  let profile: string;
  const context = joinContext("Notetaker");
  const driverPage = (): DriverPage => testDriverPage(page);
  const load = (platform: string, name: string) =>
    page.setContent(readFileSync(join(import.meta.dirname, `../fixtures/${platform}/${name}`), "utf8"));
  const observe = (driver: PlatformDriver) => driver.observe(driverPage(), context);

  /**
   * Speaker attribution over the platform's speaking marks, as the bot does it:
   * the page re-renders its marks (`speak(name)`, null: nobody), one utterance
   * of the mixed audio track is open while the driver reads the page three
   * times, and the attribution names it. Answers each utterance's speaker.
   */
  async function speakersOver(
    driver: PlatformDriver,
    speak: (names: string[]) => string,
    turns: string[][],
  ): Promise<string[]> {
    const attribution = new SpeakerAttribution({ historyMs: 60_000 });
    const out: string[] = [];
    let lastRead = 0;
    for (const names of turns) {
      await page.evaluate(speak(names));
      // A turn opens after the previous turn's reads on the clock: a read in the same millisecond as the
      // start counts for the new utterance (marks at its start are its own), so a fast run would lend it
      // the previous speaker's marks.
      while (Date.now() <= lastRead) await new Promise((r) => setTimeout(r, 1));
      const utterance = new Utterance("mixed-audio");
      attribution.follow(utterance);
      for (let i = 0; i < 3; i++) {
        attribution.noteActiveSpeakers((await observe(driver)).activeSpeakers ?? []);
        lastRead = Date.now();
      }
      utterance.end();
      await utterance.whenEnded();
      out.push(attribution.speakerOf(utterance).speaker);
    }
    return out;
  }
  const TURNS = [["Bob Example"], ["Alice Example"], [], ["Alice Example", "Bob Example"]];
  const SPOKEN = ["Bob Example", "Alice Example", "unknown", "unknown"];

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), "talkgate-web-driver-fixtures-"));
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

  describe("Zoom", () => {
    const zoom = new ZoomDriver();

    it("takes invite links and web client pages, and opens the web client with the passcode", () => {
      for (const ok of [
        "https://us05web.zoom.us/j/84335626851?pwd=abc",
        "https://zoom.us/j/123456789",
        "https://app.zoom.us/wc/join/84335626851",
        "https://app.zoom.us/wc/84335626851/join?pwd=x",
      ])
        expect(zoom.matches(new URL(ok)), ok).toBe(true);
      for (const no of [
        "http://zoom.us/j/123456789",
        "https://zoom.us/j/12",
        "https://zoom.us.evil.example/j/123456789",
        "https://zoom.us/signin",
        "https://meet.google.com/abc-defg-hij",
      ])
        expect(zoom.matches(new URL(no)), no).toBe(false);
      expect(zoom.joinUrl(new URL("https://us05web.zoom.us/j/84335626851?pwd=abc&uname=x"), "B")).toBe(
        "https://app.zoom.us/wc/84335626851/join?pwd=abc",
      );
    });

    it("goes from the landing page to the browser client, enters the name, turns devices off, joins, and waits", async () => {
      await load("zoom", "landing.html");
      expect(phaseOf(zoom, await observe(zoom))).toBe("joining");
      await zoom.screens["prejoin"]!.act!(driverPage(), context);
      expect(await page.evaluate("window.fixtureLog")).toEqual([
        "browser",
        "mic-off",
        "video-off",
        "join:Notetaker",
      ]);
      expect(phaseOf(zoom, await observe(zoom))).toBe("waiting_room");
      await load("zoom", "waiting-room.html");
      expect(phaseOf(zoom, await observe(zoom))).toBe("waiting_room");
    });

    it("is admitted by the call controls: joins computer audio, lists the others and the active speaker", async () => {
      await load("zoom", "in-call.html");
      await zoom.screens["prejoin"]!.act!(driverPage(), context);
      expect(await page.evaluate("window.fixtureLog")).toEqual(["computer-audio"]);
      const seen = await observe(zoom);
      expect(phaseOf(zoom, seen)).toBe("in_call");
      expect(seen.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
      expect(seen.activeSpeakers).toEqual(["Alice Example"]);
      expect(seen.speakers).toEqual({});
    });

    it("names each caption after the participant Zoom marks as speaking (active tile, roster icon); unknown otherwise", async () => {
      await load("zoom", "in-call.html");
      // Zoom re-renders the speaker view's active tile and moves the roster's speaking icon.
      const speak = (names: string[]) => `((names) => {
  for (const i of document.querySelectorAll(".participants-item__audio-icon--speaking")) i.remove();
  for (const li of document.querySelectorAll(".participants-li")) {
    const name = li.querySelector(".participants-item__display-name").textContent;
    if (names.includes(name)) li.querySelector(".participants-item__item-layout").insertAdjacentHTML("beforeend", '<i class="participants-item__audio-icon--speaking"></i>');
  }
  // The speaker view shows one active tile, none while nobody or several speak.
  for (const f of document.querySelectorAll(".speaker-active-container__video-frame")) f.remove();
  if (names.length === 1)
    document.body.insertAdjacentHTML("afterbegin", '<div class="speaker-active-container__video-frame"><div class="participants-item__display-name"></div></div>');
  const frame = document.querySelector(".speaker-active-container__video-frame .participants-item__display-name");
  if (frame) frame.textContent = names[0];
})(${JSON.stringify(names)})`;
      expect(await speakersOver(zoom, speak, TURNS)).toEqual(SPOKEN);
    });

    it("reads the chat (a run of messages keeps its sender) and posts in it", async () => {
      await load("zoom", "in-call.html");
      expect(await zoom.chat.read(driverPage(), context)).toEqual([
        { from: "Alice Example", text: "Hello all", at: "10:04 AM", self: false },
        { from: "Alice Example", text: "Notetaker, what is the plan?", at: "", self: false },
      ]);
      await zoom.chat.send(driverPage(), "The plan is on the wiki.");
      expect((await zoom.chat.read(driverPage(), context)).at(-1)).toEqual({
        from: "Notetaker (Me)",
        text: "The plan is on the wiki.",
        at: "",
        self: true,
      });
    });

    it.each([
      ["removed.html", "removed"],
      ["ended.html", "ended"],
      ["not-found.html", "not_found"],
      ["passcode.html", "blocked"],
      ["sign-in.html", "sign_in_required"],
      ["denied.html", "denied"],
    ])("reads %s as %s", async (fixture, phase) => {
      await load("zoom", fixture);
      expect(phaseOf(zoom, await observe(zoom))).toBe(phase);
    });

    it("leaves with Leave, then Leave Meeting", async () => {
      await load("zoom", "in-call.html");
      await zoom.leave(driverPage());
      expect(phaseOf(zoom, await observe(zoom))).toBe("ended");
    });
  });

  describe("Teams", () => {
    const teams = new TeamsDriver();

    it("takes meetup-join and teams.live.com links only", () => {
      for (const ok of [
        "https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0?context=%7b%7d",
        "https://teams.live.com/meet/9876543210123?p=abc",
      ])
        expect(teams.matches(new URL(ok)), ok).toBe(true);
      for (const no of [
        "https://teams.microsoft.com/",
        "http://teams.live.com/meet/9876543210123",
        "https://teams.live.com/meet/abc",
        "https://teams.microsoft.com.evil.example/l/meetup-join/a/b",
      ])
        expect(teams.matches(new URL(no)), no).toBe(false);
    });

    it("continues on this browser, enters the name, turns camera and microphone off, joins, and waits in the lobby", async () => {
      await load("teams", "launcher.html");
      await teams.screens["prejoin"]!.act!(driverPage(), context);
      expect(await page.evaluate("window.fixtureLog")).toEqual([
        "browser",
        "mic-off",
        "video-off",
        "join:Notetaker",
      ]);
      expect(phaseOf(teams, await observe(teams))).toBe("waiting_room");
      await load("teams", "lobby.html");
      expect(phaseOf(teams, await observe(teams))).toBe("waiting_room");
    });

    it("is admitted by the call controls, lists the others and who is speaking", async () => {
      await load("teams", "in-call.html");
      const seen = await observe(teams);
      expect(phaseOf(teams, seen)).toBe("in_call");
      expect(seen.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
      expect(seen.activeSpeakers).toEqual(["Alice Example"]);
    });

    it("names each caption after the participant Teams outlines as speaking; unknown otherwise", async () => {
      await load("teams", "in-call.html");
      // Teams outlines the speaking tiles and flags the roster entries.
      const speak = (names: string[]) => `((names) => {
  for (const tile of document.querySelectorAll("[data-stream-type]"))
    tile.querySelector("[data-tid='voice-level-stream-outline']").classList.toggle("speaking", names.includes(tile.dataset.tid));
  for (const li of document.querySelectorAll("[data-tid^='participantsInCall-']")) {
    if (names.includes(li.dataset.tid.slice("participantsInCall-".length))) li.dataset.isSpeaking = "true";
    else delete li.dataset.isSpeaking;
  }
})(${JSON.stringify(names)})`;
      expect(await speakersOver(teams, speak, TURNS)).toEqual(SPOKEN);
    });

    it("reads the chat with its times and posts in it", async () => {
      await load("teams", "in-call.html");
      expect(await teams.chat.read(driverPage(), context)).toEqual([
        { from: "Bob Example", text: "Morning", at: "2026-11-23T10:04:05.000Z", self: false },
        { from: "Alice Example", text: "Notetaker summary", at: "2026-11-23T10:04:09.000Z", self: false },
      ]);
      await teams.chat.send(driverPage(), "Summary so far: nothing yet.");
      expect((await teams.chat.read(driverPage(), context)).at(-1)).toMatchObject({
        text: "Summary so far: nothing yet.",
        self: true,
      });
    });

    it.each([
      ["removed.html", "removed"],
      ["ended.html", "ended"],
      ["not-found.html", "not_found"],
      ["sign-in.html", "sign_in_required"],
      ["denied.html", "denied"],
      ["anonymous-off.html", "blocked"],
    ])("reads %s as %s", async (fixture, phase) => {
      await load("teams", fixture);
      expect(phaseOf(teams, await observe(teams))).toBe(phase);
    });

    it("leaves with the hang-up button", async () => {
      await load("teams", "in-call.html");
      await teams.leave(driverPage());
      expect(phaseOf(teams, await observe(teams))).toBe("ended");
    });
  });
});
