import { describe, expect, it } from "vitest";
import type {
  RealtimeProvider,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
  TalkSession,
} from "../core/index.js";
import type { PipelineProviderResolver } from "../voice/index.js";
import { ULAW_8K } from "../core/talk-types.js";
import { observedProviders, type ProviderObserver } from "./provider-probe.js";

/** A voice session whose methods need their own `this` (private fields), as the real sessions' do. */
class RecordingVoice implements RealtimeVoiceSession {
  readonly #calls: unknown[][] = [];
  get calls(): unknown[][] {
    return this.#calls;
  }
  appendAudio(data: Uint8Array, base64?: string): void {
    this.#calls.push(["appendAudio", data.byteLength, base64]);
  }
  cancelResponse(): void {
    this.#calls.push(["cancelResponse"]);
  }
  truncate(itemId: string, audioEndMs: number): void {
    this.#calls.push(["truncate", itemId, audioEndMs]);
  }
  submitToolResult(callId: string, output: string, options?: { respond?: boolean }): void {
    this.#calls.push(["submitToolResult", callId, output, options]);
  }
  createResponse(instructions?: string): void {
    this.#calls.push(["createResponse", instructions]);
  }
  async close(): Promise<void> {
    this.#calls.push(["close"]);
  }
}

class FullVoice extends RecordingVoice {
  commitAudio(): void {
    this.calls.push(["commitAudio"]);
  }
  speakText(text: string, options?: { remember?: boolean }): void {
    this.calls.push(["speakText", text, options]);
  }
  setTurnDetection(enabled: boolean): void {
    this.calls.push(["setTurnDetection", enabled]);
  }
  sendText(text: string): void {
    this.calls.push(["sendText", text]);
  }
}

async function observedVoice(voice: RealtimeVoiceSession) {
  const reported: number[] = [];
  const observer: ProviderObserver = {
    connected: () => {},
    call: () => ({ first: () => {}, end: () => {} }),
    inputAudio: (_call, seconds) => reported.push(seconds),
  };
  const provider = {
    id: "fake",
    kind: "realtime",
    connect: async () => voice,
  } as unknown as RealtimeProvider;
  const base: PipelineProviderResolver = {
    stt: () => undefined,
    tts: () => undefined,
    agent: () => undefined,
    realtime: () => provider,
  };
  const session = { id: "s1", activeTurn: undefined } as unknown as TalkSession;
  const observed = observedProviders(base, observer).realtime(session)!;
  const options = { inputFormat: ULAW_8K } as unknown as RealtimeSessionOptions;
  return { counted: await observed.connect!(options, () => {}), reported };
}

describe("observedProviders: a realtime voice session", () => {
  it("passes every method through to the session with its arguments, and counts the input audio once at close", async () => {
    const voice = new FullVoice();
    const { counted, reported } = await observedVoice(voice);
    counted.appendAudio(new Uint8Array(160), "QUJD");
    counted.appendAudio(new Uint8Array(7840));
    counted.commitAudio!();
    counted.cancelResponse();
    counted.truncate("item_1", 1234);
    counted.submitToolResult("call_1", "{}", { respond: false });
    counted.createResponse("Say goodbye.");
    counted.createResponse();
    counted.speakText!("Hello.", { remember: true });
    counted.setTurnDetection!(false);
    counted.sendText!("1");
    await counted.close();
    await counted.close();
    expect(voice.calls).toEqual([
      ["appendAudio", 160, "QUJD"],
      ["appendAudio", 7840, undefined],
      ["commitAudio"],
      ["cancelResponse"],
      ["truncate", "item_1", 1234],
      ["submitToolResult", "call_1", "{}", { respond: false }],
      ["createResponse", "Say goodbye."],
      ["createResponse", undefined],
      ["speakText", "Hello.", { remember: true }],
      ["setTurnDetection", false],
      ["sendText", "1"],
      ["close"],
      ["close"],
    ]);
    // 8 000 bytes of 8 kHz u-law: one second, reported once.
    expect(reported).toEqual([1]);
  });

  it("has an optional method exactly when the session has it", async () => {
    const { counted } = await observedVoice(new RecordingVoice());
    expect(counted.commitAudio).toBeUndefined();
    expect(counted.speakText).toBeUndefined();
    expect(counted.setTurnDetection).toBeUndefined();
    expect(counted.sendText).toBeUndefined();
    const full = (await observedVoice(new FullVoice())).counted;
    for (const method of ["commitAudio", "speakText", "setTurnDetection", "sendText"] as const)
      expect(typeof full[method]).toBe("function");
  });
});
