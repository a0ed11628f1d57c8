import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import type { RealtimeVoiceSession } from "../../core/provider-types.js";
import { ConsultProgressChannel } from "../../core/tools/consult-progress.js";
import { ProgressiveSpeech } from "./progressive-speech.js";

/** A provider session recording what it was asked to do (the RealtimeVoiceSession contract). */
function recordingVoice(): RealtimeVoiceSession & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    appendAudio: () => {},
    cancelResponse: () => {},
    truncate: () => {},
    submitToolResult: (callId) => void sent.push(`output:${callId}`),
    createResponse: () => {},
    speakText: (text) => void sent.push(`speak:${text}`),
    close: async () => {},
  };
}

describe("ProgressiveSpeech", () => {
  it("sends one response at a time: each waits for the previous response_done, the output comes last", () => {
    const voice = recordingVoice();
    const speech = new ProgressiveSpeech(() => voice, NOOP_LOGGER);
    const channel = new ConsultProgressChannel();
    // The provider's function-call response is still running when the consult starts.
    speech.observe({ type: "response_started", responseId: "r0" });
    const call = speech.listen(channel, "s1", "c1", new AbortController().signal);
    channel.get("s1", "c1")!.chunk("one");
    channel.get("s1", "c1")!.chunk("two");
    expect(voice.sent).toEqual([]);
    speech.observe({ type: "response_done", responseId: "r0", status: "completed" });
    expect(voice.sent).toEqual(["speak:one"]);
    call.settle(() => voice.submitToolResult("c1", "rest"));
    speech.observe({ type: "response_started", responseId: "r1" });
    speech.observe({ type: "response_done", responseId: "r1", status: "completed" });
    expect(voice.sent).toEqual(["speak:one", "speak:two"]);
    speech.observe({ type: "response_started", responseId: "r2" });
    speech.observe({ type: "response_done", responseId: "r2", status: "completed" });
    expect(voice.sent).toEqual(["speak:one", "speak:two", "output:c1"]);
    call.close();
    expect(channel.size).toBe(0);
  });

  it("drops what was not spoken yet when the turn's signal aborts", () => {
    const voice = recordingVoice();
    const speech = new ProgressiveSpeech(() => voice, NOOP_LOGGER);
    const channel = new ConsultProgressChannel();
    const turn = new AbortController();
    speech.observe({ type: "response_started", responseId: "r0" });
    const call = speech.listen(channel, "s1", "c1", turn.signal);
    channel.get("s1", "c1")!.chunk("one");
    call.settle(() => voice.submitToolResult("c1", "rest"));
    turn.abort();
    call.close();
    speech.observe({ type: "response_done", responseId: "r0", status: "cancelled" });
    expect(voice.sent).toEqual([]);
  });

  it("a refused response (error while pending) does not stall the queue", () => {
    const voice = recordingVoice();
    const speech = new ProgressiveSpeech(() => voice, NOOP_LOGGER);
    const channel = new ConsultProgressChannel();
    speech.listen(channel, "s1", "c1", new AbortController().signal);
    channel.get("s1", "c1")!.chunk("one");
    channel.get("s1", "c1")!.chunk("two");
    expect(voice.sent).toEqual(["speak:one"]);
    speech.observe({
      type: "error",
      code: "conversation_already_has_active_response",
      message: "busy",
      fatal: false,
    });
    expect(voice.sent).toEqual(["speak:one", "speak:two"]);
  });
});
