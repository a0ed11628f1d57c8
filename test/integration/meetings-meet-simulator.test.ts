import puppeteer from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotStatus } from "../../src/meetings/index.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { startMeetSimulator, type MeetSimulator } from "../support/meet-simulator.js";
import {
  speechSequenceWav,
  speechWav,
  startMeetingsHarness,
  wordsOf,
  type MeetingsHarness,
} from "./meetings-harness.js";

/**
 * The real bot (POST /meetings/bots, headed Chromium on Xvfb, the capture
 * script, pocketsphinx, espeak-ng, an agent on loopback) against the Google
 * Meet simulator (test/support/meet-simulator.ts), which behaves as Meet does
 * where today's bots fail on it (issue 41): it refuses an automated browser,
 * ignores untrusted clicks, shows Leave in the lobby with the live curly-
 * apostrophe copy, holds the bot behind a recording notice, names speakers
 * only in its own signalling (the collections channel), drops the bot's
 * audio while Meet's microphone is off, refuses the first loads with "You
 * can’t join this video call", and carries a chat message "the meeting has
 * ended". Chromium processes: 1 bot at a time (+ 1 short-lived check).
 */
describe("the whole bot against the Google Meet simulator", () => {
  const ANSWER = "Going somewhere now, and doing something useful there, as you asked me to do.";
  let h: MeetingsHarness;
  let sim: MeetSimulator;
  let agent: FakeChatCompletionsServer;
  let n = 0;
  const code = () => `sim-meet-${"abcdefghij"[n++]}`;
  const finished = (s: BotStatus): boolean => s.state === "ended" || s.state === "fatal";

  beforeAll(async () => {
    sim = await startMeetSimulator();
    agent = new FakeChatCompletionsServer({ apiKey: "k", answer: ANSWER, tokenDelayMs: 1 });
    const baseUrl = await agent.start();
    h = await startMeetingsHarness(
      {
        aloneTimeoutMs: 120_000,
        googleMeet: { testOrigins: [sim.origin] },
        wakeTriggers: ["ten meter"],
        chat: { postSpokenAnswers: false },
      },
      { agent: { endpoint: { baseUrl, model: "fake-model", apiKey: "k" } } },
    );
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await sim?.close();
    await agent?.close();
  }, 30_000);

  const join = async (meetingCode: string, mode: "transcribe" | "agent" = "transcribe") => {
    const created = await h.post({ meetingUrl: `${sim.origin}/${meetingCode}`, botName: "Notetaker", mode });
    expect(created.status).toBe(201);
    expect(created.body.platform).toBe("google-meet");
    return created.body.id;
  };

  it("gets in as a person would, waits in a lobby that shows Leave, accepts the recording notice, hears the call with each speaker named from Meet's signalling, and is not ended by a chat message", async () => {
    const meeting = sim.meeting(code(), {
      voices: [
        { name: "Alice Example", wav: speechWav(h.dir, "goforward.raw", 2) },
        { name: "Bob Example", wav: speechWav(h.dir, "something.raw", 3) },
      ],
    });
    const id = await join(meeting.code);
    await h.waitFor(id, (s) => s.state === "in_waiting_room" || finished(s), {
      within: 30_000,
      what: "the lobby",
    });
    // Not refused as automated; the name typed and "Ask to join" clicked with trusted input; devices off.
    expect(meeting.loads.map((l) => l.refused)).toEqual([null]);
    expect(meeting.loads[0]!.userAgent).not.toMatch(/HeadlessChrome/);
    expect(meeting.asks).toEqual([{ name: "Notetaker", microphone: false, camera: false }]);
    expect(meeting.untrusted).toEqual([]);
    // The lobby shows Leave call: the bot stays in the waiting room, never in the call.
    await new Promise((r) => setTimeout(r, 2000));
    const waiting = await h.status(id);
    expect(waiting.state).toBe("in_waiting_room");
    expect(waiting.history.some((t) => t.state === "in_call")).toBe(false);

    meeting.admit();
    // The recording notice holds the call's media until a trusted "Join now".
    const inCall = await h.waitFor(id, (s) => s.state === "in_call" || finished(s), {
      within: 20_000,
      what: "the call",
    });
    expect(inCall.state).toBe("in_call");
    expect(meeting.consented).toBe(true);
    expect(inCall.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
    expect(inCall.screens?.map((s) => s.screen)).toEqual(
      expect.arrayContaining(["prejoin", "lobby", "consent", "in_call"]),
    );
    // The participants' real speech reaches the captions through the call's media, each line under its
    // speaker's name: no track names anyone, so only Meet's collections channel (RTP source -> device -> name).
    const lines = await h.waitForTranscript(
      id,
      (all) => wordsOf(all, "Alice Example").has("forward") && wordsOf(all, "Bob Example").has("something"),
      { within: 120_000, what: "each participant's words under their name" },
    );
    expect(wordsOf(lines, "Alice Example").has("something")).toBe(false);
    expect(wordsOf(lines, "Bob Example").has("forward")).toBe(false);
    // Full names, as the tiles show them (the display names "Alice" / "Bob" never), and never the bot's own.
    const speakers = new Set(lines.filter((l) => l.role === undefined).map((l) => l.speaker));
    expect([...speakers].every((s) => ["Alice Example", "Bob Example", "unknown"].includes(s))).toBe(true);
    // The chat says "the meeting has ended": a chat line, and the bot stays.
    expect(lines.some((l) => l.role === "chat" && l.text === "the meeting has ended")).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await h.status(id)).state).toBe("in_call");
    expect(meeting.untrusted).toEqual([]);
    // Transcribe mode: Meet's microphone stays off (and the bot's track is silent anyway).
    expect(meeting.microphone).toBe(false);
    expect(meeting.heardLevel).toBe(0);

    meeting.end();
    const done = await h.waitFor(id, finished, { within: 15_000, what: "the end" });
    expect({ state: done.state, subCode: done.subCode }).toEqual({
      state: "ended",
      subCode: "meeting_ended",
    });
  }, 200_000);

  it("retries “You can’t join this video call” as the references do, then gets in", async () => {
    const meeting = sim.meeting(code(), { refuseLoads: 2, consent: false });
    const id = await join(meeting.code);
    const waiting = await h.waitFor(id, (s) => s.state === "in_waiting_room" || finished(s), {
      within: 30_000,
      what: "the lobby after two refusals",
    });
    expect(waiting.state).toBe("in_waiting_room");
    expect(meeting.loads.map((l) => l.refused)).toEqual(["google", "google", null]);
    expect(waiting.screens?.filter((s) => s.screen === "cant_join")).toHaveLength(2);
    meeting.deny();
    const done = await h.waitFor(id, finished, { within: 15_000, what: "the denial" });
    expect({ state: done.state, subCode: done.subCode }).toEqual({
      state: "ended",
      subCode: "admission_denied",
    });
  }, 60_000);

  it("in agent mode is heard: Meet's microphone on for the call, the spoken answer reaches the meeting", async () => {
    const meeting = sim.meeting(code(), {
      consent: false,
      voiceWav: speechSequenceWav(h.dir, "ask-sim", ["goforward.raw", "something.raw"], 1.0, 6),
    });
    const id = await join(meeting.code, "agent");
    await h.waitFor(id, (s) => s.state === "in_waiting_room" || finished(s), {
      within: 30_000,
      what: "lobby",
    });
    meeting.admit();
    await h.waitFor(id, (s) => s.state === "in_call" || finished(s), { within: 20_000, what: "the call" });
    await expect.poll(() => meeting.microphone, { timeout: 10_000 }).toBe(true);
    // The agent was asked, and its spoken answer arrived with Meet's microphone on.
    await h
      .waitFor(id, () => agent.requests.length > 0, { within: 120_000, what: "the agent to be asked" })
      .catch(async (err: Error) => {
        throw new Error(`${err.message}; transcript: ${JSON.stringify(await h.transcript(id))}`);
      });
    await expect.poll(() => meeting.heardLevel, { timeout: 30_000, interval: 250 }).toBeGreaterThan(0.01);
    expect(meeting.untrusted).toEqual([]);
    meeting.end();
    await h.waitFor(id, finished, { within: 15_000, what: "the end" });
  }, 200_000);

  it("counts join attempts and outcomes per platform and sub-code in /metrics", async () => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    const value = (line: RegExp): number =>
      Number(
        text
          .split("\n")
          .find((l) => line.test(l))
          ?.split(" ")
          .pop(),
      );
    expect(value(/^talkgate_meeting_join_attempts_total\{platform="google-meet"/)).toBe(3);
    expect(value(/^talkgate_meeting_joined_total\{platform="google-meet"/)).toBe(2);
    expect(
      value(
        /^talkgate_meeting_bot_ends_total\{platform="google-meet",state="ended",sub_code="meeting_ended",joined="true"/,
      ),
    ).toBe(2);
    expect(
      value(
        /^talkgate_meeting_bot_ends_total\{platform="google-meet",state="ended",sub_code="admission_denied",joined="false"/,
      ),
    ).toBe(1);
  });

  it("is adversarial itself: refuses an automated browser and ignores an untrusted click", async () => {
    const refused = sim.meeting(code());
    const automated = await puppeteer.launch({
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: ["--no-sandbox"],
    });
    try {
      const page = (await automated.pages())[0]!;
      await page.goto(`${sim.origin}/${refused.code}`);
      await expect.poll(() => refused.loads[0]?.refused, { timeout: 5000 }).toBe("navigator.webdriver");
      // A browser that passes the check, clicking from inside the page: ignored.
      const clicked = sim.meeting(code());
      await page.evaluateOnNewDocument(
        "Object.defineProperty(navigator, 'webdriver', { get: () => false }); Object.defineProperty(navigator, 'userAgent', { get: () => 'Mozilla/5.0 Chrome/130.0.0.0' });",
      );
      await page.goto(`${sim.origin}/${clicked.code}`);
      await page.waitForFunction(
        `document.getElementById("ask") && !document.getElementById("ask").disabled`,
      );
      await page.evaluate(`document.getElementById("ask").click()`);
      await expect.poll(() => clicked.untrusted, { timeout: 5000 }).toEqual(["ask"]);
      expect(clicked.asks).toEqual([]);
    } finally {
      await automated.close();
    }
  }, 30_000);

  it("joins past the host's “Gemini is taking notes” notice with its Join now (never Leave), and the notes pill on the call holds nothing", async () => {
    const meeting = sim.meeting(code(), { consent: "gemini" });
    const id = await join(meeting.code);
    await h.waitFor(id, (s) => s.state === "in_waiting_room" || finished(s), {
      within: 30_000,
      what: "lobby",
    });
    meeting.admit();
    // The notice stands over participant tiles and call controls: only its Join now lets the call's media in.
    const inCall = await h.waitFor(id, (s) => s.state === "in_call" || finished(s), {
      within: 20_000,
      what: "the call",
    });
    expect(inCall.state).toBe("in_call");
    expect(meeting.consented).toBe(true);
    expect(meeting.state).toBe("in_call");
    const notice = inCall.screens?.find((s) => s.screen === "consent");
    expect(notice?.reason).toMatch(/gemini is taking notes/i);
    // The pill "Gemini is taking notes" stays on the call's page: not a notice, the bot stays in the call.
    await new Promise((r) => setTimeout(r, 1500));
    const later = await h.status(id);
    expect(later.state).toBe("in_call");
    expect(later.history.filter((t) => t.state === "in_call")).toHaveLength(1);
    expect(meeting.untrusted).toEqual([]);
    meeting.end();
    await h.waitFor(id, finished, { within: 15_000, what: "the end" });
  }, 90_000);
});
