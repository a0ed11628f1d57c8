import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TalkEvent } from "../../src/core/talk-events.js";
import {
  startMeetingsHarness,
  speechWav,
  wordsOf,
  type MeetingsHarness,
  type Participant,
} from "./meetings-harness.js";

/**
 * Chromium processes: 1 bot + 2 participants. Real WebRTC between the
 * participants and the bot on loopback, real Opus (WebCodecs in the bot's
 * page, libopus on the server), real recordings, pocketsphinx captions.
 */
describe("meeting bot in transcribe mode, in the local test meeting", () => {
  let h: MeetingsHarness;
  let alice: Participant;
  let bob: Participant;
  let botId: string;

  beforeAll(async () => {
    h = await startMeetingsHarness(
      { aloneTimeoutMs: 60_000 },
      {},
      { levelMeters: false, participantsListen: false },
    );
    // Alice joins first, so she is the host.
    alice = await h.participant("standup", "Alice", speechWav(h.dir, "goforward.raw"));
    bob = await h.participant("standup", "Bob", speechWav(h.dir, "something.raw"));
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 30_000);

  it("joins, and captions each participant's real speech under that participant's name", async () => {
    const events: TalkEvent[] = [];
    h.app.runtime.subscribeAll((e) => events.push(e));
    const created = await h.post({
      meetingUrl: h.roomUrl("standup"),
      botName: "Notetaker",
      mode: "transcribe",
    });
    expect(created.status).toBe(201);
    botId = created.body.id;
    expect(created.body.platform).toBe("test-room");

    const inCall = await h.waitFor(botId, (s) => s.state === "in_call" && s.participants.length === 2);
    expect(inCall.participants.sort()).toEqual(["Alice", "Bob"]);
    // The pages run without level meters (levels=off): a level read fails rather than reading silence.
    await expect(alice.page.evaluate(`window.testRoom.peakLevel("Bob")`)).rejects.toThrow(/levels=off/);

    const lines = await h.waitForTranscript(botId, (l) => {
      const a = wordsOf(l, "Alice");
      const b = wordsOf(l, "Bob");
      return a.has("forward") && b.has("something");
    });
    // Each recording's words appear under its speaker and never under the other one.
    expect(wordsOf(lines, "Alice").has("something")).toBe(false);
    expect(wordsOf(lines, "Bob").has("forward")).toBe(false);
    expect(lines.every((l) => l.speaker === "Alice" || l.speaker === "Bob")).toBe(true);
    // The bot's own (silent) microphone never becomes a caption.
    expect(lines.some((l) => l.speaker === "Notetaker")).toBe(false);
    // Each caption's utterance was reported as speech by the meeting's segmenter, on the caption's turn.
    const captions = events.filter(
      (e) => e.type === "transcript.done" && (e.payload as { role: string }).role === "user",
    );
    expect(captions.length).toBeGreaterThan(0);
    // Each caption with words carries its latency (the utterance's end to the caption), on its turn.
    for (const caption of captions.filter((c) => (c.payload as { text: string }).text)) {
      const latency = events.filter((e) => e.type === "latency.metrics" && e.turnId === caption.turnId);
      expect(latency).toMatchObject([{ source: "meeting", payload: { name: "utterance_end_to_caption" } }]);
      expect((latency[0]!.payload as { ms: number }).ms).toBeGreaterThanOrEqual(0);
    }
    // The session names the bot (the console lists it by that name).
    expect(h.app.runtime.getSession(captions[0]!.sessionId)?.metadata["botName"]).toBe("Notetaker");
    for (const caption of captions) {
      for (const type of ["input.audio.speech_started", "input.audio.speech_stopped"])
        expect(events.filter((e) => e.type === type && e.turnId === caption.turnId)).toMatchObject([
          { source: "adapter" },
        ]);
    }
  }, 90_000);

  it("ends with meeting_ended when the host ends the meeting for everyone", async () => {
    await alice.page.evaluate("window.testRoom.end()");
    const ended = await h.waitFor(botId, (s) => s.state === "ended" || s.state === "fatal");
    expect(ended.state).toBe("ended");
    expect(ended.subCode).toBe("meeting_ended");
    expect(ended.history.map((t) => t.state)).toEqual([
      "scheduled",
      "joining",
      "in_call",
      "leaving",
      "ended",
    ]);
    // Finalized captions stay readable after the bot ended.
    expect((await h.transcript(botId)).length).toBeGreaterThan(0);
    void bob;
  }, 30_000);
});
