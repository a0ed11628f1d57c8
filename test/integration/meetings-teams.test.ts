/**
 * The whole bot (its headed Chromium on Xvfb, capture, local captions, the
 * agent) in Teams on the web as simulated from the maintained bots' facts
 * (test/support/meeting-sim/teams-sim-page.ts): every behaviour the
 * simulator has, end to end. Chromium processes: one the bots share (a
 * context each), and one for the meetings' media cores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { sleep, startSimHarness, waitUntil, type SimHarness } from "../support/meeting-sim/sim-harness.js";
import { speechWav, wordsOf } from "./meetings-harness.js";

describe("the bot in Teams on the web (simulated), end to end", () => {
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
      (origin) => ({ aloneTimeoutMs: 3000, joinTimeoutMs: 60_000, teams: { testOrigins: [origin] } }),
      { agent: { endpoint: { baseUrl, model: "fake-model", apiKey: "k" } } },
      // The bots one after another: one browser for them all, a context each.
      { sharedBotBrowser: true },
    );
    alice = speechWav(s.h.dir, "goforward.raw", 0.3);
    bob = speechWav(s.h.dir, "something.raw", 0.3);
  }, 60_000);

  afterAll(async () => {
    await s?.close();
    await chat?.close();
  }, 30_000);

  it("joins from a light-meetings link by real input (no audio or video, confirmed), waits in the lobby (which shows Leave), captures only the mainAudio mix, names speakers from the outlines, keeps the roster while the chat pane replaces the People pane, ignores 'the meeting has ended' in the chat, and ends kicked when removed", async () => {
    const { h } = s;
    const m = s.sim.meeting("teams", { participants: ["Alice Example", "Bob Example"] });
    await s.core(m);
    const coords = btoa(
      encodeURIComponent(
        JSON.stringify({ conversationId: `19:meeting_${m.id}@thread.v2`, tenantId: "t", messageId: "0" }),
      ),
    );
    const created = await h.post({
      meetingUrl: `${s.sim.origin}/light-meetings/launch?coords=${coords}`,
      botName: "Notetaker",
      mode: "transcribe",
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await m.until(() => m.phase === "waiting", "the bot's join request", 80_000);
    expect(m.events.find((e) => e.t === "join")).toMatchObject({
      name: "Notetaker",
      mic: false,
      video: false,
    });
    // The lobby shows the hang-up button: still waiting.
    await h.waitFor(id, (st) => st.state === "in_waiting_room", { within: 20_000, what: "the lobby" });
    await sleep(1500);
    expect((await h.status(id)).state).toBe("in_waiting_room");
    m.admit();

    const inCall = await h.waitFor(id, (st) => st.state === "in_call" && st.participants.length === 2, {
      within: 60_000,
      what: "the call with the roster from the People pane",
    });
    expect(inCall.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
    await m.until(() => m.mediaConnected, "the meeting's audio", 40_000);

    await m.speak("Alice Example", alice);
    await sleep(1200);
    await m.speak("Bob Example", bob);
    const lines = await h.waitForTranscript(
      id,
      (l) => wordsOf(l, "Alice Example").has("forward") && wordsOf(l, "Bob Example").has("something"),
      { within: 80_000, what: "Alice's and Bob's captions, named" },
    );
    await sleep(2500); // a doubled copy would have been captioned by now
    const all = await h.transcript(id);
    const captions = all.filter((l) => l.role === undefined);
    // Each sentence once: the redundant per-speaker tracks are held, the mix alone is captioned.
    expect(captions.filter((l) => /forward/.test(l.text))).toHaveLength(1);
    expect(captions.filter((l) => /something/.test(l.text))).toHaveLength(1);
    expect(wordsOf(lines, "Alice Example").has("something")).toBe(false);

    m.say("Bob Example", "the meeting has ended");
    await h.waitForTranscript(
      id,
      (l) => l.some((x) => x.role === "chat" && x.text === "the meeting has ended"),
      {
        within: 40_000,
        what: "the chat line",
      },
    );
    // The chat pane replaced the People pane; the People count keeps the bot from leaving alone.
    await sleep(4000);
    const still = await h.status(id);
    expect(still.state).toBe("in_call");
    expect(still.participants.sort()).toEqual(["Alice Example", "Bob Example"]);
    expect(m.untrustedInputs()).toEqual([]);
    expect(m.events.filter((e) => e.t === "refused")).toEqual([]);

    m.remove();
    const ended = await h.waitFor(id, (st) => st.state === "ended" || st.state === "fatal", {
      within: 40_000,
      what: "the end",
    });
    expect([ended.state, ended.subCode]).toEqual(["ended", "kicked"]);
  }, 300_000);

  it("agent mode under a recording consent: agrees, then unmutes Teams' microphone, so the meeting hears the answer", async () => {
    const { h } = s;
    const m = s.sim.meeting("teams", { participants: ["Alice Example"], waitingRoom: false, consent: true });
    await s.core(m);
    const created = await h.post({ meetingUrl: m.url, botName: "Notetaker", mode: "agent" });
    const id = created.body.id;
    await h.waitFor(id, (st) => st.state === "in_call", { within: 80_000, what: "the call" });
    await m.until(() => m.events.some((e) => e.t === "consent"), "the consent", 40_000);
    await m.until(() => m.mediaConnected && m.botMicOn, "the platform microphone on", 40_000);
    m.resetBotLevel();
    m.say("Alice Example", "Notetaker, what is the plan?");
    await waitUntil(() => m.botPeak() > 0.02, "the meeting hearing the answer", 80_000);
    expect(m.untrustedInputs()).toEqual([]);
    const del = await fetch(`${h.baseUrl}/meetings/bots/${id}`, { method: "DELETE" });
    expect(del.status).toBe(202);
    await m.until(() => m.phase === "left", "the bot hanging up", 40_000);
  }, 240_000);

  it("a meeting behind a Microsoft sign-in ends the bot fatal / sign_in_required", async () => {
    const { h } = s;
    const m = s.sim.meeting("teams", { participants: ["Alice Example"], signInRequired: true });
    const created = await h.post({ meetingUrl: m.url, botName: "Notetaker", mode: "transcribe" });
    const st = await h.waitFor(created.body.id, (x) => x.state === "ended" || x.state === "fatal", {
      within: 60_000,
      what: "the bot to give up",
    });
    expect([st.state, st.subCode]).toEqual(["fatal", "sign_in_required"]);
  }, 60_000);
});
