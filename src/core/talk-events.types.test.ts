import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { createTalkRuntime } from "./session-runtime.js";
import type { TalkRuntime, TalkSession } from "./session-types.js";
import type {
  OutputAudioDeltaPayload,
  SessionClosedPayload,
  TalkEvent,
  TalkEventOf,
  TalkEventPayloads,
  TalkEventType,
  TranscriptPayload,
} from "./talk-events.js";

// The type checks below are proven by `tsc --noEmit` (this file is in tsconfig's include):
// a `@ts-expect-error` line that stops being an error fails the typecheck.

const runtimes: TalkRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function open(): TalkSession {
  const runtime = createTalkRuntime({ closeGraceMs: 100 });
  runtimes.push(runtime);
  return runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
  });
}

/** Never called: the wrong payloads below must not compile, and must not run either. */
function wrongPayloads(session: TalkSession, turnId: string): void {
  // @ts-expect-error: output.text.delta carries `text`, not `txt`
  session.emit({ type: "output.text.delta", turnId, payload: { txt: "hi" } });
  // @ts-expect-error: tool.call needs argumentsJson
  session.emit({ type: "tool.call", turnId, payload: { name: "echo" } });
  // @ts-expect-error: the payload of another type (output.text.done) is not output.audio.done's
  session.emit({ type: "output.audio.done", turnId, payload: { text: "hi" } });
  // @ts-expect-error: ms is a number even where extra fields are allowed
  session.emit({ type: "latency.metrics", payload: { name: "barge_in_to_clear", ms: "12" } });
  // @ts-expect-error: capture events carry nothing
  session.emit({ type: "capture.started", turnId, payload: { bytes: 1 } });
  // @ts-expect-error: not an event type
  session.emit({ type: "talk.bogus", payload: {} });
}

describe("typed talk events", () => {
  it("has a payload type for every event type, and the envelope fields of the contract", () => {
    expectTypeOf<keyof TalkEventPayloads>().toEqualTypeOf<TalkEventType>();
    expectTypeOf<TalkEvent["type"]>().toEqualTypeOf<TalkEventType>();
    expectTypeOf<keyof TalkEventOf<"turn.ended">>().toEqualTypeOf<
      | "id"
      | "type"
      | "sessionId"
      | "turnId"
      | "captureId"
      | "seq"
      | "timestamp"
      | "mode"
      | "transport"
      | "brain"
      | "provider"
      | "final"
      | "callId"
      | "itemId"
      | "parentId"
      | "source"
      | "payload"
    >();
    expectTypeOf(wrongPayloads).toBeFunction();
  });

  it("narrowing an event by type gives that type's payload", () => {
    const session = open();
    const turn = session.startTurn();
    const heard: string[] = [];
    session.subscribe((event) => {
      expectTypeOf(event).toEqualTypeOf<TalkEvent>();
      if (event.type === "transcript.done") {
        expectTypeOf(event.payload).toEqualTypeOf<TranscriptPayload>();
        heard.push(`${event.payload.speaker ?? "?"}: ${event.payload.text}`);
      } else if (event.type === "output.audio.delta") {
        expectTypeOf(event.payload).toEqualTypeOf<OutputAudioDeltaPayload>();
      } else if (event.type === "session.closed") {
        expectTypeOf(event.payload).toEqualTypeOf<SessionClosedPayload>();
      }
    });
    expectTypeOf<TalkEvent<"session.closed">>().toEqualTypeOf<TalkEventOf<"session.closed">>();
    expectTypeOf<TalkEvent<"output.text.delta" | "output.text.done">["payload"]>().toEqualTypeOf<{
      text: string;
    }>();

    // A payload may carry extra fields where its type allows them (transcripts do: speaker, trackId...).
    const emitted = session.emit({
      type: "transcript.done",
      turnId: turn.id,
      final: true,
      payload: { role: "user", text: "hello", speaker: "Ann" },
    });
    expectTypeOf(emitted).toEqualTypeOf<TalkEventOf<"transcript.done"> | undefined>();
    expect(emitted?.payload.text).toBe("hello");
    expect(heard).toEqual(["Ann: hello"]);
  });
});
