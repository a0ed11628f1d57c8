import type {
  ProviderCapabilities,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../../core/index.js";
import type { AudioFormat } from "../../../core/index.js";

/**
 * A realtime provider for core's own pipeline tests: it implements the
 * RealtimeProvider contract in process, records what the pipeline asks of it
 * and lets the test play provider events. The wire protocol of a real
 * provider is tested against a local server that speaks it (src/providers).
 */
export class ScriptedRealtimeProvider implements RealtimeProvider {
  readonly kind = "realtime" as const;
  readonly id = "scripted";
  readonly label = "Scripted realtime provider";
  readonly capabilities: ProviderCapabilities;
  readonly calls: string[] = [];
  readonly audio: Uint8Array[] = [];
  /** Tool outputs the pipeline submitted, as [callId, output]. */
  readonly toolResults: [string, string][] = [];
  options: RealtimeSessionOptions | undefined;
  #emit: ((e: RealtimeProviderEvent) => void) | undefined;

  constructor(formats: AudioFormat[]) {
    this.capabilities = {
      modes: ["realtime"],
      transports: ["gateway-relay"],
      gatewayRelay: true,
      inputFormats: formats,
      outputFormats: formats,
    };
  }

  async health() {
    return { ok: true };
  }

  async connect(
    options: RealtimeSessionOptions,
    onEvent: (e: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    this.options = options;
    this.#emit = onEvent;
    const calls = this.calls;
    return {
      // Copied: the contract lets the caller reuse `data` once appendAudio returns.
      appendAudio: (data) => void this.audio.push(data.slice()),
      commitAudio: () => void calls.push("commit"),
      cancelResponse: () => void calls.push("cancelResponse"),
      truncate: (itemId, ms) => void calls.push(`truncate:${itemId}:${ms}`),
      submitToolResult: (callId, output) => void this.toolResults.push([callId, output]),
      createResponse: () => void calls.push("createResponse"),
      close: async () => void calls.push("close"),
    };
  }

  play(event: RealtimeProviderEvent): void {
    this.#emit!(event);
  }
}
