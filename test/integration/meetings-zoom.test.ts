/**
 * The whole bot (its headed Chromium on Xvfb, capture, local captions, the
 * agent) in Zoom's web client as simulated from the maintained bots' facts
 * (test/support/meeting-sim/zoom-sim-page.ts): every behaviour the
 * simulator has, end to end. Chromium processes: one the bots share (a
 * context each), and one for the meetings' media cores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { sleep, startSimHarness, waitUntil, type SimHarness } from "../support/meeting-sim/sim-harness.js";
import { speechWav, wordsOf } from "./meetings-harness.js";

describe("the bot in Zoom's web client (simulated), end to end", () => {
  let s: SimHarness;
  let chat: FakeChatCompletionsServer;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    chat = new FakeChatCompletionsServer({
      apiKey: "k",
      answer: "The plan is on the wiki page, section two.",
      tokenDelayMs: 2,
    });
    const baseUrl = await chat.start();
    s = await startSimHarness(
      (origin) => ({
        aloneTimeoutMs: 3000,
        joinTimeoutMs: 60_000,
        // The schema's shortest reload (the test waits for two loads and then the one that finds the host),
        // with as long a total as before (45 s) before the bot would give up.
        zoom: { testOrigins: [origin], hostNotStarted: { reloadMs: 500, maxReloads: 90 } },
      }),
      { agent: { endpoint: { baseUrl, model: "fake-model", apiKey: "k" } } },
      // Three bots one after another: one browser for them all, a context each.
      { sharedBotBrowser: true },
    );
    alice = speechWav(s.h.dir, "goforward.raw", 0.3);
    bob = speechWav(s.h.dir, "something.raw", 0.3);
  }, 60_000);

  afterAll(async () => {
    await s?.close();
    await chat?.close();
  }, 30_000);

  it("waits for the host (3,001, reloading), joins by real input past the cookie banner, Allow and a disabled Join, waits in the waiting room (which shows Leave), is heard through the recording notice and computer audio, counts the roster, names each speaker, ignores 'the meeting has ended' typed in the chat, and ends on Zoom's end dialog", async () => {
    const { h } = s;
    const m = s.sim.meeting("zoom", {
      participants: ["Alice Example", "Bob Example"],
      hostStarted: false,
      consent: true,
    });
    await s.core(m);
    const created = await h.post({ meetingUrl: m.url, botName: "Notetaker", mode: "transcribe" });
    expect(created.status).toBe(201);
    const id = created.body.id;

    // Error 3,001: the bot waits (in the waiting room, as far as its status goes) and loads the page again.
    await h.waitFor(id, (st) => st.state === "in_waiting_room", {
      within: 60_000,
      what: "waiting for the host",
    });
    await waitUntil(
      () => m.loads.filter((l) => l.startsWith("/wc/")).length >= 2,
      "a second load of the error page",
    );
    m.start();
    await m.until(() => m.phase === "waiting", "the bot's join request", 80_000);
    expect(m.botName).toBe("Notetaker");
    // The waiting room shows a Leave button: still waiting, not in the call.
    await sleep(1500);
    expect((await h.status(id)).state).toBe("in_waiting_room");
    m.admit();

    const inCall = await h.waitFor(id, (st) => st.state === "in_call" && st.participants.length === 2, {
      within: 60_000,
      what: "the call with the roster read from the participants panel",
    });
    expect(inCall.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
    // Audio only once the recording notice was acknowledged and computer audio joined.
    await m.until(() => m.mediaConnected, "the meeting's audio", 40_000);
    expect(m.events.some((e) => e.t === "consent")).toBe(true);
    // Transcribe mode: the platform microphone stays off.
    expect(m.botMicOn).toBe(false);

    // One mixed stream: the active speaker names each line.
    await m.speak("Alice Example", alice);
    await sleep(1200);
    await m.speak("Bob Example", bob);
    const lines = await h.waitForTranscript(
      id,
      (l) => wordsOf(l, "Alice Example").has("forward") && wordsOf(l, "Bob Example").has("something"),
      { within: 80_000, what: "Alice's and Bob's captions, named" },
    );
    expect(wordsOf(lines, "Alice Example").has("something")).toBe(false);
    expect(wordsOf(lines, "Bob Example").has("forward")).toBe(false);

    // A participant types the end text in the chat: a chat line, not an end.
    m.say("Alice Example", "the meeting has ended");
    await h.waitForTranscript(
      id,
      (l) => l.some((x) => x.role === "chat" && x.text === "the meeting has ended"),
      {
        within: 40_000,
        what: "the chat line",
      },
    );
    // Longer than aloneTimeoutMs with two others in the call: no left_alone.
    await sleep(4000);
    expect((await h.status(id)).state).toBe("in_call");

    // Real input only, and a browser Zoom did not take for a bot.
    expect(m.untrustedInputs()).toEqual([]);
    expect(m.events.filter((e) => e.t === "refused")).toEqual([]);

    m.end();
    const ended = await h.waitFor(id, (st) => st.state === "ended" || st.state === "fatal", {
      within: 40_000,
      what: "the end",
    });
    expect([ended.state, ended.subCode]).toEqual(["ended", "meeting_ended"]);
  }, 300_000);

  it("agent mode: keeps Zoom's microphone on, so the meeting hears the spoken answer", async () => {
    const { h } = s;
    const m = s.sim.meeting("zoom", { participants: ["Alice Example"], waitingRoom: false });
    await s.core(m);
    const created = await h.post({ meetingUrl: m.url, botName: "Notetaker", mode: "agent" });
    const id = created.body.id;
    await h.waitFor(id, (st) => st.state === "in_call" && st.participants.length === 1, {
      within: 80_000,
      what: "the call",
    });
    await m.until(() => m.mediaConnected && m.botMicOn, "the platform microphone on", 40_000);
    m.resetBotLevel();
    m.say("Alice Example", "Notetaker, what is the plan?");
    await waitUntil(() => m.botPeak() > 0.02, "the meeting hearing the answer", 80_000);
    await m.until(
      () => m.chat.some((c) => c.from === "Notetaker" && /wiki/.test(c.text)),
      "the answer posted",
      20_000,
    );
    expect(m.untrustedInputs()).toEqual([]);
    const del = await fetch(`${h.baseUrl}/meetings/bots/${id}`, { method: "DELETE" });
    expect(del.status).toBe(202);
    await m.until(() => m.phase === "left", "the bot leaving with Leave, Leave Meeting", 40_000);
  }, 240_000);

  it("the meeting's anti-bot wall ends the bot fatal / blocked_by_platform after one more try", async () => {
    const { h } = s;
    const m = s.sim.meeting("zoom", { participants: ["Alice Example"], botWall: true });
    const created = await h.post({ meetingUrl: m.url, botName: "Notetaker", mode: "transcribe" });
    const st = await h.waitFor(created.body.id, (x) => x.state === "ended" || x.state === "fatal", {
      within: 120_000,
      what: "the bot to give up",
    });
    expect([st.state, st.subCode]).toEqual(["fatal", "blocked_by_platform"]);
    expect(st.message).toMatch(/bot/i);
    expect(st.screens?.map((v) => v.screen)).toContain("bot_wall");
  }, 180_000);
});
