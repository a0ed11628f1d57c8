import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { startStandardWebhookReceiver } from "../support/standard-webhooks-receiver.js";
import { startMeetingsHarness, type MeetingsHarness, type Participant } from "./meetings-harness.js";

interface ChatEntry {
  from: string;
  text: string;
  at: string;
}

const ANSWER = "The plan is to ship the release on Friday.";
const WEBHOOK_SECRET = `whsec_${Buffer.from("meetings-chat-webhook-secret-32by").toString("base64")}`;

/**
 * The meeting's chat both ways, end to end. Chromium processes: 1 bot (agent
 * mode) + 1 for the 2 participants, both silent (the harness's guests, a page
 * each); they type in the test room's chat panel through its page API. The
 * agent is an OpenAI-compatible server on loopback answering ANSWER;
 * espeak-ng speaks it into the bot's microphone.
 */
describe("meeting bot and the meeting's chat, in the local test meeting", () => {
  let h: MeetingsHarness;
  let agent: FakeChatCompletionsServer;
  let alice: Participant;
  let bob: Participant;
  let botId: string;
  let hooks: Awaited<ReturnType<typeof startStandardWebhookReceiver>>;

  beforeAll(async () => {
    agent = new FakeChatCompletionsServer({ apiKey: "k", answer: ANSWER, tokenDelayMs: 1 });
    const baseUrl = await agent.start();
    // The receiver refuses its first two deliveries (retried with the same id).
    hooks = await startStandardWebhookReceiver(WEBHOOK_SECRET, [503, 500]);
    h = await startMeetingsHarness(
      {
        aloneTimeoutMs: 60_000,
        wakeTriggers: ["talkgate"],
        webhook: { url: hooks.url, secret: WEBHOOK_SECRET, initialBackoffMs: 10 },
      },
      { agent: { endpoint: { baseUrl, model: "fake-model", apiKey: "k" } } },
    );
    // Both silent: pages of the harness's guest browser (its microphone the silence), not a Chromium each.
    alice = await h.guest("chat", "Alice");
    bob = await h.guest("chat", "Bob");
    // The bot's page asks the room for a camera (video=on); its camera is the card it draws.
    const created = await h.post({
      meetingUrl: `${h.roomUrl("chat")}?video=on`,
      botName: "Assistant",
      mode: "agent",
      camera: "card",
    });
    expect(created.status).toBe(201);
    botId = created.body.id;
    await h.waitFor(botId, (s) => s.state === "in_call" && s.participants.length === 2);
  }, 90_000);

  afterAll(async () => {
    await h?.close();
    await agent?.close();
    await hooks?.close();
  }, 30_000);

  const chatLog = (p: Participant): Promise<ChatEntry[]> =>
    p.page.evaluate(`window.testRoom.chatLog()`) as Promise<ChatEntry[]>;
  const sendChat = async (p: Participant, text: string): Promise<void> => {
    expect(await p.page.evaluate(`window.testRoom.sendChat(${JSON.stringify(text)})`)).toBe(true);
  };
  const videoLevel = (p: Participant): Promise<number> =>
    p.page.evaluate(`window.testRoom.videoLevel("Assistant")`) as Promise<number>;
  const userMessages = (): string[] => agent.requests.map((r) => lastUserMessage(r.body));

  it("records chat lines with their sender and leaves messages not addressed to it alone", async () => {
    // Alice's page measures no camera from a participant that sends none.
    expect(await alice.page.evaluate(`window.testRoom.videoLevel("Bob")`)).toBe(0);
    await sendChat(alice, "Hello everyone, the agenda is in the doc.");
    const lines = await h.waitForTranscript(botId, (all) => all.some((l) => l.role === "chat"));
    const line = lines.find((l) => l.role === "chat")!;
    expect(line).toMatchObject({
      speaker: "Alice",
      role: "chat",
      text: "Hello everyone, the agenda is in the doc.",
    });
    expect(Number.isFinite(Date.parse(line.at))).toBe(true);
    // Both pages show it, the sender's own included, with the room's time.
    for (const p of [alice, bob]) {
      expect(await chatLog(p)).toEqual([{ from: "Alice", text: line.text, at: line.at }]);
    }
    expect(agent.requests).toHaveLength(0);
  }, 60_000);

  it("answers a chat question addressed by name in the chat, and speaks the answer", async () => {
    // The bot's camera card reaches Bob: a frame that is not black.
    await expect.poll(() => videoLevel(bob), { timeout: 30_000, interval: 200 }).toBeGreaterThan(10);
    const idle = await videoLevel(bob);
    await sendChat(alice, "@Assistant, what is the plan?");
    // While the answer plays, the card's speaking block lights up: the frame Bob receives changes.
    await expect
      .poll(async () => (await videoLevel(bob)) - idle, { timeout: 60_000, interval: 100 })
      .toBeGreaterThan(10);
    // The answer arrives in everyone's chat, from the bot.
    await expect
      .poll(async () => (await chatLog(bob)).filter((m) => m.from === "Assistant").map((m) => m.text), {
        timeout: 60_000,
        interval: 200,
      })
      .toEqual([ANSWER]);
    expect(userMessages()).toEqual(["what is the plan"]);
    // Spoken too (meetings.chat.speakAnswers): Bob's page hears the bot's track.
    await expect
      .poll(() => bob.page.evaluate(`window.testRoom.peakLevel("Assistant")`) as Promise<number>, {
        timeout: 60_000,
        interval: 200,
      })
      .toBeGreaterThan(0.02);
    // The spoken answer is an assistant line once heard, and is not posted a second time.
    const lines = await h.waitForTranscript(botId, (all) => all.some((l) => l.role === "assistant"));
    expect(lines.find((l) => l.role === "assistant")).toMatchObject({ speaker: "Assistant", text: ANSWER });
    expect(lines.filter((l) => l.role === "chat").map((l) => [l.speaker, l.text])).toEqual([
      ["Alice", "Hello everyone, the agenda is in the doc."],
      ["Alice", "@Assistant, what is the plan?"],
      ["Assistant", ANSWER],
    ]);
    expect((await chatLog(alice)).filter((m) => m.from === "Assistant")).toHaveLength(1);
  }, 120_000);

  it("posts a running summary on request, written by the agent from the meeting so far, not spoken", async () => {
    const before = await bob.page.evaluate(`window.testRoom.peakLevel("Assistant")`);
    expect(before).toBeGreaterThan(0);
    await sendChat(bob, "talkgate summary please");
    await expect
      .poll(
        async () => (await chatLog(alice)).map((m) => m.text).filter((t) => t.startsWith("Summary so far")),
        {
          timeout: 60_000,
          interval: 200,
        },
      )
      .toEqual([`Summary so far: ${ANSWER}`]);
    const asked = userMessages().at(-1)!;
    expect(asked).toMatch(/^Summarize this meeting so far/);
    expect(asked).toContain("Alice (chat): Hello everyone, the agenda is in the doc.");
    expect(asked).toContain(`Assistant: ${ANSWER}`);
    // The bot reads its own post back like any message: a chat line with it as sender.
    const lines = await h.waitForTranscript(botId, (all) => all.at(-1)?.speaker === "Assistant");
    expect(lines.at(-1)).toMatchObject({ role: "chat", text: `Summary so far: ${ANSWER}` });
    // Kept out of the meeting's audio: no second spoken answer.
    expect(lines.filter((l) => l.role === "assistant")).toHaveLength(1);
  }, 120_000);

  it("sends status changes and every finalized line as Standard Webhooks, verified by the receiver, each id once", async () => {
    const lines = await h.transcript(botId);
    await expect
      .poll(() => hooks.events.filter((e) => e.event["type"] === "meeting.transcript.line").length, {
        timeout: 30_000,
      })
      .toBe(lines.length);
    // Every delivery verified (none rejected); the two refused ones were retried.
    expect(hooks.rejected).toBe(0);
    expect(hooks.deliveries).toBe(hooks.events.length + 2);
    const states = hooks.events.filter((e) => e.event["type"] === "meeting.bot.state");
    expect(states.map((e) => e.event["state"])).toEqual(["joining", "in_call"]);
    expect(states.map((e) => e.id)).toEqual([`msg_${botId}_state_1`, `msg_${botId}_state_2`]);
    const delivered = hooks.events.filter((e) => e.event["type"] === "meeting.transcript.line");
    expect(delivered.map((e) => e.event["line"])).toEqual(lines);
    expect(delivered.map((e) => e.id)).toEqual(lines.map((_, i) => `msg_${botId}_line_${i}`));
    expect(delivered.map((e) => e.event["index"])).toEqual(lines.map((_, i) => i));
  }, 60_000);
});

function lastUserMessage(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: string }[] }).messages ?? [];
  return [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
}
