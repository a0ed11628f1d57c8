import { readFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TalkError } from "../../src/core/errors.js";
import { NOOP_LOGGER } from "../../src/core/logger.js";
import { BotChat } from "../../src/meetings/bot/bot-chat.js";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/index.js";
import { GoogleMeetDriver } from "../../src/meetings/platforms/google-meet/meet-driver.js";
import type { ChatMessage, DriverPage } from "../../src/meetings/platforms/platform-driver.js";
import { joinContext, phaseOf, testDriverPage } from "../support/driver-page.js";

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
  const context = joinContext("Notetaker");

  const driverPage = (): DriverPage => testDriverPage(page);
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
    expect(phaseOf(driver, await driver.observe(driverPage(), context))).toBe("joining");
    await driver.screens["prejoin"]!.act!(driverPage(), context);
    expect(await page.evaluate("window.fixtureLog")).toEqual(["mic-off", "camera-off", "ask:Notetaker"]);
    expect(phaseOf(driver, await driver.observe(driverPage(), context))).toBe("waiting_room");
  });

  it("treats waiting-room text as a veto even when call controls are rendered", async () => {
    await load("waiting-room.html");
    expect(phaseOf(driver, await driver.observe(driverPage(), context))).toBe("waiting_room");
  });

  it("is admitted by the in-call roster and lists the others, never itself", async () => {
    await load("in-call.html");
    const seen = await driver.observe(driverPage(), context);
    expect(phaseOf(driver, seen)).toBe("in_call");
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
    expect(phaseOf(driver, await driver.observe(driverPage(), context))).toBe(phase);
  });

  it("leaves with the Leave call button", async () => {
    await load("in-call.html");
    await driver.leave(driverPage());
    expect(phaseOf(driver, await driver.observe(driverPage(), context))).toBe("ended");
  });

  describe("chat", () => {
    const chat = driver.chat;
    const read = () => chat.read(driverPage(), context);
    const receive = (from: string, text: string, time?: string) =>
      page.evaluate(
        `window.meetFixture.receive(${JSON.stringify(from)}, ${JSON.stringify(text)}${time ? `, ${JSON.stringify(time)}` : ""})`,
      );
    const panelOpen = () => page.evaluate(`!document.getElementById("side-panel").hidden`);
    const HISTORY: ChatMessage[] = [
      { from: "Alice Example", text: "Hello all", at: "10:04 AM", self: false },
      { from: "Alice Example", text: "The agenda is in the doc", at: "10:04 AM", self: false },
      { from: "Bob Example", text: "Thanks", at: "10:05 AM", self: false },
    ];

    it("takes Meet's 500 characters a message", () => {
      expect(chat.maxChars).toBe(500);
    });

    it("opens the closed panel to read, and reads others' messages with their sender (a run keeps its sender) and time", async () => {
      await load("in-call.html");
      // Meet renders no message list before the panel was opened: nothing to read without opening it.
      expect(await page.evaluate(`!!document.querySelector(".Ge9Kpc")`)).toBe(false);
      expect(await read()).toEqual(HISTORY);
      expect(await page.evaluate("window.fixtureLog")).toEqual(["chat-open"]);
      // Closed again, the list stays on the page and is read without reopening.
      await page.evaluate("window.meetFixture.closeChat()");
      await receive("Bob Example", "Notetaker, what is the plan?", "10:07 AM");
      expect((await read()).slice(3)).toEqual([
        { from: "Bob Example", text: "Notetaker, what is the plan?", at: "10:07 AM", self: false },
      ]);
      expect(await panelOpen()).toBe(false);
      expect(await page.evaluate("window.fixtureLog")).toEqual(["chat-open"]);
    });

    it("never clicks an open panel shut when its list is not found (a layout not known here)", async () => {
      await load("in-call.html");
      await read();
      await page.evaluate(`document.querySelector(".Ge9Kpc").className = "renamed"`);
      expect(await read()).toEqual([]);
      expect(await read()).toEqual([]);
      expect(await panelOpen()).toBe(true);
    });

    it("reads older builds' run attributes: data-sender-name, data-timestamp (as ISO), data-message-text, own runs as You", async () => {
      await page.setContent(`<div aria-live="polite" class="Ge9Kpc z38b6">
  <div data-sender-name="Alice Example" data-timestamp="1763978400000"><div data-message-text="Hi there">Hi there</div></div>
  <div data-sender-name="You" data-timestamp="1763978460000"><div data-message-text="Hello">Hello</div></div>
</div>`);
      expect(await read()).toEqual([
        { from: "Alice Example", text: "Hi there", at: "2025-11-24T10:00:00.000Z", self: false },
        { from: "Notetaker", text: "Hello", at: "2025-11-24T10:01:00.000Z", self: true },
      ]);
    });

    it("gives the bot each message once, its own marked as its own", async () => {
      await load("in-call.html");
      const seen: ChatMessage[] = [];
      const bot = new BotChat({
        botId: "b1",
        maxChars: chat.maxChars,
        post: (text) => chat.send(driverPage(), text),
        onMessage: (m) => seen.push(m),
        logger: NOOP_LOGGER,
      });
      bot.observe(await read());
      bot.observe(await read());
      expect(seen).toEqual(HISTORY);
      await receive("Alice Example", "Notetaker summary");
      await receive("Alice Example", "Notetaker summary"); // said twice: two messages
      bot.observe(await read());
      await chat.send(driverPage(), "Summary so far: nothing yet.");
      bot.observe(await read());
      bot.observe(await read());
      expect(seen.slice(3)).toEqual([
        { from: "Alice Example", text: "Notetaker summary", at: "10:06 AM", self: false },
        { from: "Alice Example", text: "Notetaker summary", at: "10:06 AM", self: false },
        { from: "Notetaker", text: "Summary so far: nothing yet.", at: "10:06 AM", self: true },
      ]);
    });

    it("posts into a panel never opened: opens it, types, sends with Enter; the post shows as its own", async () => {
      await load("in-call.html");
      await chat.send(driverPage(), "The plan is on the wiki.");
      expect(await page.evaluate("window.meetFixture.posts")).toEqual(["The plan is on the wiki."]);
      expect(await panelOpen()).toBe(true);
      expect((await read()).at(-1)).toEqual({
        from: "Notetaker",
        text: "The plan is on the wiki.",
        at: "10:06 AM",
        self: true,
      });
      // A second post in the same minute joins the bot's run; the box is empty again.
      await chat.send(driverPage(), "Second line");
      expect((await read()).slice(-2).map((m) => [m.from, m.text, m.self])).toEqual([
        ["Notetaker", "The plan is on the wiki.", true],
        ["Notetaker", "Second line", true],
      ]);
      expect(
        await page.evaluate(`document.querySelector('textarea[aria-label="Send a message"]').value`),
      ).toBe("");
    });

    it("reopens a closed panel to post, and does not close an open one", async () => {
      await load("in-call.html");
      await read();
      await page.evaluate("window.meetFixture.closeChat()");
      await chat.send(driverPage(), "Back again");
      expect(await panelOpen()).toBe(true);
      await chat.send(driverPage(), "Still here");
      expect(await panelOpen()).toBe(true);
      expect(await page.evaluate("window.meetFixture.posts")).toEqual(["Back again", "Still here"]);
    });

    it("sends with the button where Enter does not send", async () => {
      await load("in-call.html");
      await read();
      // A build whose box ignores Enter: the keydown handler is replaced by one that swallows it.
      await page.evaluate(`(() => {
  const box = document.querySelector('textarea[aria-label="Send a message"]');
  const copy = box.cloneNode();
  copy.addEventListener("input", () => (document.querySelector('button[aria-label="Send a message"]').disabled = copy.value.trim() === ""));
  copy.addEventListener("keydown", (e) => { if (e.key === "Enter") e.preventDefault(); });
  box.replaceWith(copy);
})()`);
      await chat.send(driverPage(), "Via the button");
      expect(await page.evaluate("window.meetFixture.posts")).toEqual(["Via the button"]);
    });

    it("leaves out its post that Meet failed to deliver", async () => {
      await load("in-call.html");
      await page.evaluate("window.meetFixture.failNextPost()");
      await chat.send(driverPage(), "Lost words");
      await chat.send(driverPage(), "Delivered words");
      expect(await page.evaluate(`document.body.innerText.includes("Your message wasn't delivered")`)).toBe(
        true,
      );
      expect((await read()).filter((m) => m.self).map((m) => m.text)).toEqual(["Delivered words"]);
    });

    it("refuses to post with invalid_state where the chat is off or absent, and reads nothing there", async () => {
      await load("in-call.html");
      await read();
      await page.evaluate(`document.querySelector('textarea[aria-label="Send a message"]').disabled = true`);
      const off = await chat.send(driverPage(), "hello").catch((e: unknown) => e);
      expect(off).toBeInstanceOf(TalkError);
      expect(off).toMatchObject({ code: "invalid_state", details: { reason: "chat_disabled" } });
      await load("alone.html");
      expect(await read()).toEqual([]);
      const none = await chat.send(driverPage(), "hello").catch((e: unknown) => e);
      expect(none).toMatchObject({ code: "invalid_state", details: { reason: "chat_unavailable" } });
    });
  });
});
