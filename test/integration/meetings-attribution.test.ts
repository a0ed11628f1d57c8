import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMeetingsHarness, speechWav, wordsOf, type MeetingsHarness } from "./meetings-harness.js";

/**
 * Speaker attribution by RTP sources, with 1 bot + 2 participants in real
 * Chromium. The bot's page runs the test room with `audio=detached`: remote
 * audio plays outside the tiles, as on SFU platforms, so no track maps to a
 * name and only the SSRCs the participants announce in their session
 * descriptions (the room's signalling) can name a speaker. Alice announces
 * hers; Bob withholds his (`ssrc=withhold`), so his speech has a source that
 * maps to nobody and must be captioned "unknown", never under a name.
 */
describe("meeting captions attributed by RTP sources", () => {
  let h: MeetingsHarness;

  beforeAll(async () => {
    // Nobody reads a level here, and the participants need not hear each other: no level meters in the
    // room (the bot's page included: sources, not speaking marks, name the lines), no playback for them.
    h = await startMeetingsHarness(
      { aloneTimeoutMs: 60_000 },
      {},
      { levelMeters: false, participantsListen: false },
    );
    await h.participant("sources", "Alice", speechWav(h.dir, "goforward.raw"));
    await h.participant("sources", "Bob", speechWav(h.dir, "something.raw"), { ssrc: "withhold" });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  }, 30_000);

  it("names Alice by her SSRC and captions Bob's unannounced source as unknown", async () => {
    const created = await h.post({
      meetingUrl: h.roomUrl("sources", { audio: "detached" }),
      botName: "Notetaker",
      mode: "transcribe",
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const inCall = await h.waitFor(id, (s) => s.state === "in_call" && s.participants.length === 2);
    expect(inCall.participants.sort()).toEqual(["Alice", "Bob"]);

    const lines = await h.waitForTranscript(
      id,
      (l) => wordsOf(l, "Alice").has("forward") && wordsOf(l, "unknown").has("something"),
    );
    // Bob's words are never under a name: not his (nobody can know it), not Alice's (the only named source).
    expect(lines.some((l) => l.speaker === "Bob")).toBe(false);
    expect(wordsOf(lines, "Alice").has("something")).toBe(false);
    expect(lines.every((l) => l.speaker === "Alice" || l.speaker === "unknown")).toBe(true);
    // Each line names the RTP source that dominated it: Alice's lines one SSRC, the unknown lines another.
    const aliceSources = new Set(lines.filter((l) => l.speaker === "Alice").map((l) => l.rtpSource));
    const unknownSources = new Set(
      lines.filter((l) => l.speaker === "unknown" && l.text.includes("something")).map((l) => l.rtpSource),
    );
    expect(aliceSources.size).toBe(1);
    expect([...aliceSources][0]).toEqual(expect.any(Number));
    expect([...unknownSources].every((s) => typeof s === "number" && !aliceSources.has(s))).toBe(true);

    await fetch(`${h.baseUrl}/meetings/bots/${id}`, { method: "DELETE" });
    const done = await h.waitFor(id, (s) => s.state === "ended" || s.state === "fatal");
    expect(done.subCode).toBe("requested");
  }, 120_000);
});
