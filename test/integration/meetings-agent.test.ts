import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { FakeChatCompletionsServer, longAnswer } from "../support/fake-chat-completions-server.js";
import {
  silenceWav,
  speechSequenceWav,
  startMeetingsHarness,
  type MeetingsHarness,
  type Participant,
} from "./meetings-harness.js";

/**
 * Agent mode end to end. Chromium processes: 1 bot + 2 participants. Alice's
 * microphone loops a real recording pocketsphinx hears reliably ("go forward
 * ten meters": the wake phrase, configured as "ten meter" to exercise the
 * tolerant match) then the question ("go somewhere and do something"), then
 * a pause shorter than the assistant's answer, so her next loop speaks over
 * it (barge-in). The agent is an OpenAI-compatible server on loopback
 * streaming a long answer, slowly; espeak-ng speaks it into the bot's microphone.
 * Bob is silent and measures what his page receives from the bot.
 */
describe("meeting bot in agent mode, in the local test meeting", () => {
  let h: MeetingsHarness;
  let chat: FakeChatCompletionsServer;
  let bob: Participant;
  let botId: string;
  let assistantSessionId: string;
  const events: TalkEvent[] = [];

  beforeAll(async () => {
    // 500 tokens of 4 characters, one every 100 ms: the agent still streams the answer 50 s after the question,
    // when Alice's next loop (~20 s after it) barges in. At 2 ms a token the stream was over by then, and the
    // barge-in an output.audio.cancelled, not the turn.cancelled the second test expects.
    chat = new FakeChatCompletionsServer({ apiKey: "k", answer: longAnswer(2000), tokenDelayMs: 100 });
    const baseUrl = await chat.start();
    h = await startMeetingsHarness(
      { aloneTimeoutMs: 60_000, wakeTriggers: ["ten meter"] },
      { agent: { endpoint: { baseUrl, model: "fake-model", apiKey: "k" } } },
      // Alice plays nothing she hears and nobody reads her levels; the bot's room has no level meters. Bob
      // measures the bot's voice: his page keeps both.
      { levelMeters: false, participantsListen: false },
    );
    h.app.runtime.subscribeAll((event) => {
      if (event.sessionId === assistantSessionId) events.push(event);
    });
    bob = await h.participant("ask", "Bob", silenceWav(h.dir), { levels: "on", audio: "on" });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await chat?.close();
  }, 30_000);

  /** The assistant session's events but deltas (type@turn), for a failed wait's message. */
  const eventTypes = (): string =>
    events
      .filter((e) => !e.type.endsWith(".delta") && e.type !== "input.audio.appended")
      .map((e) => `${e.type}@${e.turnId ?? "-"}`)
      .join(" ");

  const bobHearsBot = (): Promise<number> =>
    bob.page.evaluate(`window.testRoom.peakLevel("Assistant")`) as Promise<number>;

  it("answers a wake phrase plus a question out loud: the agent gets the question and the other participant hears the answer", async () => {
    const created = await h.post({ meetingUrl: h.roomUrl("ask"), botName: "Assistant", mode: "agent" });
    expect(created.status).toBe(201);
    botId = created.body.id;
    const inCall = await h.waitFor(botId, (s) => s.state === "in_call" && s.participants.includes("Bob"));
    assistantSessionId = inCall.assistantSessionId!;
    expect(assistantSessionId).toBeTruthy();
    // Alice asks; the harness owns her page and closes it. She joins after the bot: her microphone's loop
    // starts as she joins, so the bot hears it from its start, not from wherever the loop was when the bot
    // got in (up to a whole loop of waiting for the next wake phrase). Her next loop must start after the
    // answer is audible: what is left of the gap once her caption is transcribed and the answer spoken. With
    // 9 s, on a machine at half the speed of the usual one and the suite's other files beside this one, her
    // next loop came first (its question superseded the answer instead of barging in): 18 s.
    await h.participant(
      "ask",
      "Alice",
      speechSequenceWav(h.dir, "alice", ["goforward.raw", "something.raw"], 1.0, 18),
    );
    await h.waitFor(botId, (s) => s.state === "in_call" && s.participants.length === 2);
    // The bot's microphone is muted until the assistant speaks.
    expect(await bobHearsBot()).toBeLessThan(0.002);

    // The first spoken answer: audio written for it, and Bob's page hears the bot's track.
    await waitUntil(
      () => events.some((e) => e.type === "output.audio.delta"),
      "the answer's audio",
      eventTypes,
      120_000,
    );
    await waitUntil(async () => (await bobHearsBot()) > 0.02, "Bob hearing the bot", eventTypes);

    const asked = chat.requests.map((r) => lastUserMessage(r.body));
    expect(asked.length).toBeGreaterThan(0);
    // The question is the caption after the wake phrase, never the wake phrase itself.
    expect(asked[0]).toMatch(/somewhere|something/);
    expect(asked[0]).not.toMatch(/meters/);
    const question = events.find((e) => e.type === "transcript.done");
    expect((question?.payload as { speaker?: string }).speaker).toBe("Alice");
  }, 180_000);

  it("cancels the answer with one barge_in terminal event when a participant speaks over it", async () => {
    // Alice's next loop starts while the 2,000-character answer is still playing, its agent still streaming
    // it: the speech ends the turn (docs/architecture.md, the one interruption sequence, step 3), one
    // turn.cancelled, never an output.audio.cancelled beside it.
    const first = events.find((e) => e.type === "output.audio.started")!;
    await waitUntil(
      () => events.some((e) => e.type === "turn.cancelled" && e.turnId === first.turnId),
      "the answer's turn.cancelled",
      eventTypes,
      45_000,
    );
    const terminals = events.filter(
      (e) =>
        (e.itemId === first.itemId &&
          (e.type === "output.audio.cancelled" || e.type === "output.audio.done")) ||
        (e.type === "turn.cancelled" && e.turnId === first.turnId),
    );
    expect(terminals.map((e) => e.type)).toEqual(["turn.cancelled"]);
    expect(terminals[0]!.payload).toMatchObject({
      reason: "barge_in",
      aborted: expect.arrayContaining(["output"]),
    });
    // Nothing of the cancelled answer is written after its terminal event.
    const cancelAt = events.indexOf(terminals[0]!);
    expect(
      events.slice(cancelAt + 1).some((e) => e.itemId === first.itemId && e.type === "output.audio.delta"),
    ).toBe(false);
    // The agent's stream for that answer was closed.
    await expect.poll(() => chat.disconnects + chat.completedStreams, { timeout: 10_000 }).toBeGreaterThan(0);
    // The bot's own voice never became a caption line: its only lines are its answers, as heard.
    const lines = await h.waitForTranscript(
      botId,
      (all) => all.some((l) => l.role === "assistant" && l.turnId === first.turnId),
      { within: 40_000, what: "the cut answer's line" },
    );
    // (Its chat posts are lines too, role "chat": below.)
    expect(lines.some((l) => l.speaker === "Assistant" && l.role === undefined)).toBe(false);
    expect(lines.some((l) => l.speaker === "Alice")).toBe(true);
    // The cut answer: one line, the bot as speaker, interrupted, with only what the meeting heard of it:
    // the start of the chunks sent for it (whole words), never the whole 2,000-character answer.
    const answers = lines.filter((l) => l.role === "assistant" && l.turnId === first.turnId);
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer).toMatchObject({ speaker: "Assistant", role: "assistant", interrupted: true });
    const sent = events
      .filter((e) => e.itemId === first.itemId && e.type === "output.audio.delta")
      .map((e) => (e.payload as { segmentText?: string }).segmentText?.trim())
      .filter((t) => t)
      .join(" ");
    expect(answer.text.length).toBeGreaterThan(0);
    expect(sent.startsWith(answer.text)).toBe(true);
    expect(answer.text.length).toBeLessThan(2000);
    // meetings.chat.postSpokenAnswers: the answer is posted in the meeting's chat as heard, cut included.
    await expect
      .poll(
        async () =>
          ((await bob.page.evaluate(`window.testRoom.chatLog()`)) as { from: string; text: string }[]).filter(
            (m) => m.from === "Assistant",
          ),
        { timeout: 10_000 },
      )
      .toEqual([expect.objectContaining({ text: answer.text })]);
  }, 90_000);
});

function lastUserMessage(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: string }[] }).messages ?? [];
  return [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
}

/** Polls `check`; past `within` ms fails naming `what` and the event types seen (a test timeout names nothing). */
async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  seen: () => string,
  within = 60_000,
): Promise<void> {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`waited ${within} ms for ${what}; events: ${seen()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
