import { afterEach, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import {
  FakeOpenAiRealtimeServer,
  toneAudio,
  type FakeOpenAiRealtimeServerOptions,
} from "../support/fake-openai-realtime-server.js";
import {
  OPENAI_KEY,
  recordEvents,
  rejectionOf,
  startGateway,
  type GatewayHarness,
  type HarnessSetup,
} from "../support/gateway-harness.js";

/**
 * Interruptions of a relayed answer through the whole gateway (issue 36): a
 * real WebSocket client that reports what it played (`playback`), the
 * OpenAI Realtime stand-in over a real socket.
 */

let h: GatewayHarness | undefined;
let realtime: FakeOpenAiRealtimeServer | undefined;
afterEach(async () => {
  await h?.close();
  await realtime?.close();
  h = realtime = undefined;
});

async function setup(options: FakeOpenAiRealtimeServerOptions = {}, extra: HarnessSetup = {}) {
  const { realtime, client, rec, sessionId } = await setupWithToken(options, extra);
  return { realtime, client, rec, sessionId };
}

async function setupWithToken(options: FakeOpenAiRealtimeServerOptions = {}, extra: HarnessSetup = {}) {
  realtime = new FakeOpenAiRealtimeServer({ apiKey: OPENAI_KEY, ...options });
  const realtimeUrl = await realtime.start();
  h = await startGateway({ realtimeUrl, ...extra });
  const client = await h.connect({ as: "writer" });
  const rec = recordEvents(client);
  const { sessionId, joinToken } = await client.request("talk.session.create", {
    mode: "realtime",
    transport: "gateway-relay",
  });
  await realtime.waitFor((e) => e.type === "session.update");
  return { realtime, client, rec, sessionId, joinToken };
}

/** PCM16 24 kHz: 48 bytes per ms. */
const msOf = (audioBase64: string): number => Buffer.from(audioBase64, "base64").byteLength / 48;

async function answerPlaying(realtime: FakeOpenAiRealtimeServer, rec: ReturnType<typeof recordEvents>) {
  realtime.respond();
  const started = await rec.next((e) => e.type === "output.audio.started");
  const itemId = started.itemId!;
  // Ten deltas of 100 ms reach the client before the stand-in holds the rest.
  await expect
    .poll(() => rec.audio.filter((a) => a.itemId === itemId).reduce((n, a) => n + msOf(a.audioBase64), 0), {
      timeout: 20_000,
    })
    .toBe(1000);
  return { itemId, turnId: started.turnId! };
}

describe("the heard position a Talk API client reports (playback)", () => {
  it("push-to-talk over a relayed answer truncates the provider's item where the client's speaker was", async () => {
    const { realtime, client, rec, sessionId } = await setup({
      replies: [{ audio: toneAudio(3000, "pcm16"), transcript: "A long answer.", holdAfterDeltas: 10 }],
    });
    const { itemId, turnId } = await answerPlaying(realtime, rec);
    await client.request("talk.session.startTurn", { sessionId, playback: { itemId, playedMs: 640 } });
    const truncate = await realtime.waitFor((e) => e.type === "conversation.item.truncate");
    expect(truncate.event).toMatchObject({ item_id: itemId, audio_end_ms: 640 });
    expect(realtime.truncations).toEqual([{ itemId, audioEndMs: 640 }]);
    await rec.next((e) => e.type === "turn.cancelled" && e.turnId === turnId);
  });

  it("cancelOutput truncates at the position the app reported through the client (reportPlayback)", async () => {
    const { realtime, client, rec, sessionId } = await setup({
      replies: [{ audio: toneAudio(3000, "pcm16"), transcript: "A long answer.", holdAfterDeltas: 10 }],
    });
    const { itemId, turnId } = await answerPlaying(realtime, rec);
    client.reportPlayback(sessionId, { itemId, playedMs: 420 });
    expect((await client.request("talk.session.cancelOutput", { sessionId, turnId })).cancelled).toBe(true);
    const truncate = await realtime.waitFor((e) => e.type === "conversation.item.truncate");
    expect(truncate.event).toMatchObject({ item_id: itemId, audio_end_ms: 420 });
  });

  it("a position reported with appendAudio is where a later cancel truncates; past what was sent counts as all of it", async () => {
    const { realtime, client, rec, sessionId } = await setup({
      replies: [{ audio: toneAudio(3000, "pcm16"), transcript: "A long answer.", holdAfterDeltas: 10 }],
    });
    const { itemId, turnId } = await answerPlaying(realtime, rec);
    const silence = Buffer.alloc(960).toString("base64");
    await client.request("talk.session.appendAudio", {
      sessionId,
      audioBase64: silence,
      playback: { itemId, playedMs: 5000 },
    });
    await client.request("talk.session.cancelOutput", { sessionId, turnId });
    const truncate = await realtime.waitFor((e) => e.type === "conversation.item.truncate");
    expect(truncate.event).toMatchObject({ item_id: itemId, audio_end_ms: 1000 });
  });

  it("bad playback values are invalid_params naming the field, and the session goes on", async () => {
    const { client, sessionId } = await setup();
    const bad: unknown[] = [
      { itemId: "", playedMs: 10 },
      { itemId: "item_1", playedMs: -1 },
      { itemId: "item_1", playedMs: Number.NaN },
      { itemId: "item_1", playedMs: 3_600_001 },
      { itemId: "item_1" },
      { itemId: "item_1", playedMs: 10, extra: true },
      "item_1@10",
    ];
    for (const playback of bad) {
      for (const method of ["talk.session.cancelOutput", "talk.session.startTurn"] as const) {
        const err = await rejectionOf(client.requestUntyped(method, { sessionId, playback }));
        expect(err.code, `${method} ${JSON.stringify(playback)}`).toBe("invalid_params");
        expect(JSON.stringify(err.details)).toContain("playback");
      }
    }
    // An item the session never sent is ignored, not an error.
    expect(
      (
        await client.request("talk.session.cancelOutput", {
          sessionId,
          playback: { itemId: "item_unknown", playedMs: 10 },
        })
      ).cancelled,
    ).toBe(false);
    expect(await client.request("talk.session.startTurn", { sessionId })).toMatchObject({ sessionId });
  });
});

describe("the one interruption sequence on a relayed session", () => {
  it("a response cancelled before its first audio delta never plays: its in-flight audio is dropped, not stamped with the new turn", async () => {
    const { realtime, client, rec, sessionId } = await setup({
      replies: [{ audio: toneAudio(2000, "pcm16"), transcript: "Never heard.", holdAfterDeltas: 0 }],
      // Three deltas already on the wire when the cancel arrives, as the real service's are.
      inFlightOnCancel: 3,
    });
    realtime.respond();
    // The response started with no turn of the caller's: it got a turn of its own.
    await rec.next((e) => e.type === "turn.started" && e.source === "provider");
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await realtime.waitFor((e) => e.type === "response.cancel");
    // The cancelled response.done (its usage) arrives after its in-flight deltas.
    await rec.next((e) => e.type === "usage.metrics");
    expect(rec.audio).toEqual([]);
    expect(rec.events.filter((e) => e.type.startsWith("output.") || e.type === "transcript.delta")).toEqual(
      [],
    );
    expect(rec.events.filter((e) => e.turnId === turnId).map((e) => e.type)).toEqual([
      "turn.started",
      "capture.started",
    ]);
  });

  it("barge-in while a tool runs and the answer still plays ends the answering turn with one terminal event", async () => {
    const { realtime, client, rec, sessionId } = await setup(
      {
        replies: [
          {
            audio: toneAudio(10_000, "pcm16"),
            transcript: "Let me look that up.",
            toolCall: { name: "slow", arguments: {} },
          },
        ],
      },
      { allowTools: ["slow"] },
    );
    realtime.respond();
    const started = await rec.next((e) => e.type === "output.audio.started");
    // The client plays the answer from its start: it is still playing while the tool runs.
    await client.request("talk.session.appendAudio", {
      sessionId,
      audioBase64: Buffer.alloc(960).toString("base64"),
      playback: { itemId: started.itemId!, playedMs: 0 },
    });
    await rec.next((e) => e.type === "tool.call");
    expect(rec.events.some((e) => e.type === "output.audio.done")).toBe(false);
    realtime.triggerSpeechStarted();
    const next = await rec.next((e) => e.type === "turn.started" && e.turnId !== started.turnId);
    const terminal = rec.events.filter(
      (e) =>
        e.turnId === started.turnId &&
        (e.type === "turn.cancelled" || e.type === "output.audio.cancelled" || e.type === "turn.ended"),
    );
    expect(terminal.map((e) => e.type)).toEqual(["turn.ended", "turn.cancelled"]);
    expect(terminal[1]!.payload).toMatchObject({ reason: "barge_in" });
    expect(next.seq).toBeGreaterThan(terminal[1]!.seq);
  });
});

describe("a joiner's replay", () => {
  it("carries only the current owner's session.ready, not those of earlier joins", async () => {
    const { sessionId, joinToken } = await setupWithToken();
    const second = await h!.connect({ as: "writer" });
    const secondRec = recordEvents(second);
    await second.request("talk.session.join", { sessionId, joinToken });
    await secondRec.next((e) => e.type === "session.ready");

    const third = await h!.connect({ as: "writer" });
    const thirdRec = recordEvents(third);
    const joined = await third.request("talk.session.join", { sessionId, joinToken, afterSeq: 0 });
    const own = await thirdRec.next((e) => e.type === "session.ready" && e.seq > joined.seq);
    expect(own.payload).toMatchObject({ reason: "joined" });
    // Everything up to its own session.ready: the replay, then that one notice.
    const upToOwn = thirdRec.events.filter((e) => e.seq <= own.seq);
    expect(upToOwn.filter((e) => e.type === "session.ready").map((e) => e.seq)).toEqual([own.seq]);
    expect(upToOwn.some((e) => e.type === "session.replaced")).toBe(false);
    expect(upToOwn[0]?.type).toBe("session.created");
    expect(joined.replayed).toBe(upToOwn.length - 1);
  });
});

export type { TalkClient };

/** `ms` of 16 kHz PCM16 sent as 20 ms appendAudio frames: a loud tone (speech to the stand-in's VAD) or silence. */
async function sendAudio(client: TalkClient, sessionId: string, ms: number, loud: boolean): Promise<void> {
  for (let at = 0; at < ms; at += 20) {
    const pcm = new Int16Array(320);
    if (loud)
      for (let i = 0; i < pcm.length; i++)
        pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 16_000));
    await client.request("talk.session.appendAudio", {
      sessionId,
      audioBase64: Buffer.from(pcm.buffer).toString("base64"),
    });
  }
}

describe("speech over an answer that does not interrupt (talk.input.interruptOnSpeech off)", () => {
  it("gets a turn of its own once that answer is over: its transcript and the answer to it carry a new turn id", async () => {
    const { realtime, client, rec, sessionId } = await setup(
      {
        replies: [
          { audio: toneAudio(1500, "pcm16"), transcript: "The first answer.", holdAfterDeltas: 5 },
          { audio: toneAudio(500, "pcm16"), transcript: "The second answer." },
        ],
        userTranscript: "a question asked over the first answer",
      },
      { input: { interruptOnSpeech: false }, realtimeTranscription: true },
    );
    realtime.respond();
    const first = await rec.next((e) => e.type === "output.audio.started");
    // The caller speaks over the answer: the stand-in's VAD hears it, the policy keeps the answer playing.
    await sendAudio(client, sessionId, 600, true);
    await rec.next((e) => e.type === "input.audio.speech_started");
    realtime.resume();
    await rec.next((e) => e.type === "output.audio.done" && e.itemId === first.itemId);
    // The caller stops: the stand-in ends the speech, transcribes it and answers it.
    await sendAudio(client, sessionId, 1000, false);
    const words = await rec.next(
      (e) => e.type === "transcript.done" && (e.payload as { role?: string }).role === "user",
    );
    const second = await rec.next((e) => e.type === "output.audio.started" && e.itemId !== first.itemId);
    expect(words.turnId).not.toBe(first.turnId);
    expect(second.turnId).toBe(words.turnId);
    expect(
      rec.events.filter((e) => e.type === "output.audio.cancelled" || e.type === "turn.cancelled"),
    ).toEqual([]);
  });
});

describe("speech that ends while a protected answer still plays (talk.input.interruptOnSpeech off)", () => {
  it("gets a turn of its own once that answer has played: its words and the answer to them carry a new turn id", async () => {
    const { realtime, client, rec, sessionId } = await setup(
      {
        replies: [
          { audio: toneAudio(4000, "pcm16"), transcript: "The first answer." },
          { audio: toneAudio(500, "pcm16"), transcript: "The second answer." },
        ],
        userTranscript: "a question asked over the first answer",
      },
      // No echo guard: the provider hears the caller's speech over the answer (not silence in its place).
      {
        input: { interruptOnSpeech: false, echoCancellation: { enabled: false } },
        realtimeTranscription: true,
      },
    );
    realtime.respond();
    const first = await rec.next((e) => e.type === "output.audio.started");
    // The provider sent the whole answer at once; the client plays it from now, at 1x (4 s).
    await client.request("talk.session.appendAudio", {
      sessionId,
      audioBase64: Buffer.alloc(640).toString("base64"),
      playback: { itemId: first.itemId!, playedMs: 0 },
    });
    // The caller speaks over the answer and stops while it still plays: the stand-in's VAD ends the speech,
    // transcribes it and answers it (its first response is over: only the client still plays it).
    await sendAudio(client, sessionId, 600, true);
    await sendAudio(client, sessionId, 800, false);
    await expect.poll(() => realtime!.itemAudioMs.size, { timeout: 10_000 }).toBe(2);
    expect(rec.events.some((e) => e.type === "output.audio.done" && e.itemId === first.itemId)).toBe(false);
    // The protected answer is not cut for it: it ends when the client has played it, on its own turn.
    const done = await rec.next((e) => e.type === "output.audio.done" && e.itemId === first.itemId);
    expect(done.turnId).toBe(first.turnId);
    const words = await rec.next(
      (e) => e.type === "transcript.done" && (e.payload as { role?: string }).role === "user",
    );
    const second = await rec.next((e) => e.type === "output.audio.started" && e.itemId !== first.itemId);
    expect(words.turnId).not.toBe(first.turnId);
    expect(second.turnId).toBe(words.turnId);
    expect(words.seq).toBeGreaterThan(done.seq);
    expect(
      rec.events
        .filter((e) => e.turnId === words.turnId)
        .map((e) => e.type)
        .slice(0, 4),
    ).toEqual([
      "turn.started",
      "capture.started",
      "input.audio.speech_started",
      "input.audio.speech_stopped",
    ]);
    await rec.next((e) => e.type === "output.audio.done" && e.itemId === second.itemId);
    expect(
      rec.events.filter((e) => e.type === "output.audio.cancelled" || e.type === "turn.cancelled"),
    ).toEqual([]);
  }, 30_000);
});
