import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/index.js";
import type { ChatMessage } from "../platforms/platform-driver.js";
import { BotChat, splitMessage } from "./bot-chat.js";
import { digest } from "./bot-captions.js";

const msg = (from: string, text: string, at = "2026-01-01T10:00:00.000Z", self = false): ChatMessage => ({
  from,
  text,
  at,
  self,
});

function chat(options: { maxChars?: number; post?: (text: string) => Promise<void> } = {}) {
  const seen: ChatMessage[] = [];
  const posted: string[] = [];
  const bot = new BotChat({
    botId: "b",
    maxChars: options.maxChars ?? 100,
    post:
      options.post ??
      (async (text) => {
        posted.push(text);
      }),
    onMessage: (m) => seen.push(m),
    logger: NOOP_LOGGER,
  });
  return { bot, seen, posted };
}

describe("BotChat", () => {
  it("hands over each message once, in order, as the page's list grows", () => {
    const { bot, seen } = chat();
    bot.observe([msg("Alice", "hi")]);
    bot.observe([msg("Alice", "hi"), msg("Bob", "hello")]);
    bot.observe([msg("Alice", "hi"), msg("Bob", "hello")]);
    expect(seen.map((m) => m.text)).toEqual(["hi", "hello"]);
  });

  it("counts two equal messages twice, and is not fooled by a list the platform trims", () => {
    const { bot, seen } = chat();
    bot.observe([msg("Alice", "+1")]);
    bot.observe([msg("Alice", "+1"), msg("Alice", "+1")]);
    // The platform dropped the oldest entries from the DOM: nothing new.
    bot.observe([msg("Alice", "+1")]);
    bot.observe([]);
    bot.observe([msg("Alice", "+1"), msg("Alice", "+1"), msg("Bob", "ok")]);
    expect(seen.map((m) => `${m.from}:${m.text}`)).toEqual(["Alice:+1", "Alice:+1", "Bob:ok"]);
  });

  it("a throwing handler does not stop the following messages", () => {
    const seen: string[] = [];
    const bot = new BotChat({
      botId: "b",
      maxChars: 10,
      post: async () => {},
      onMessage: (m) => {
        if (m.text === "bad") throw new Error("boom");
        seen.push(m.text);
      },
      logger: NOOP_LOGGER,
    });
    bot.observe([msg("A", "bad"), msg("A", "good")]);
    expect(seen).toEqual(["good"]);
  });

  it("posts in order, one at a time, split to the platform's size; a failed post does not stop the rest", async () => {
    const posted: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const { bot } = chat({
      maxChars: 12,
      post: async (text) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        if (text === "fail") throw new Error("not taken");
        posted.push(text);
      },
    });
    bot.say("one two three four five");
    bot.say("fail");
    bot.say("last");
    await expect.poll(() => posted.at(-1)).toBe("last");
    expect(posted).toEqual(["one two", "three four", "five", "last"]);
    expect(maxInFlight).toBe(1);
  });

  it("drops what is queued once closed, and ignores blank text", async () => {
    const { bot, posted } = chat();
    bot.say("   ");
    bot.close();
    bot.say("after close");
    await new Promise((r) => setTimeout(r, 5));
    expect(posted).toEqual([]);
  });
});

describe("splitMessage", () => {
  it("cuts at the last space in the second half, else hard", () => {
    expect(splitMessage("aaaa bbbb cccc", 9)).toEqual(["aaaa bbbb", "cccc"]);
    expect(splitMessage("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(splitMessage("a bcdefghij", 4)).toEqual(["a bc", "defg", "hij"]);
    expect(splitMessage("  short  ", 100)).toEqual(["short"]);
    expect(splitMessage("", 100)).toEqual([]);
  });
});

describe("digest (the summary without an agent)", () => {
  it("names each speaker with their count of lines and latest words", () => {
    const line = (speaker: string, text: string) => ({ at: "", speaker, turnId: "t", text });
    expect(digest([line("Alice", "one"), line("Bob", "two"), line("Alice", "three")])).toBe(
      'Summary so far: Alice (2 lines), latest: "three"; Bob (1 line), latest: "two".',
    );
    expect(digest([line("Alice", "x".repeat(200))])).toContain(`"${"x".repeat(157)}..."`);
  });
});
