import type {
  ProviderCall,
  ProviderCallTrace,
  ProviderCallUnits,
  ProviderObserver,
} from "./provider-probe.js";

const UNTRACED: ProviderCallTrace = Object.freeze({ first: () => {}, end: () => {} });

/**
 * The `usage.metrics` of the providers a session calls one request at a time
 * (STT, TTS, agent: stt-tts sessions, a relay's bridge and brain paths, a
 * transcription): each call's units, told on its session when the call ends,
 * with the provider's id on the envelope. `{kind: "stt", sttSeconds}` is the
 * audio the recognizer heard, `{kind: "tts", ttsCharacters}` the text given to
 * the synthesizer (a cut answer's whole request: it was sent), `{kind:
 * "agent", inputTokens, outputTokens}` what the agent reported (nothing from
 * an agent that reports no tokens). A realtime provider's own reports come in
 * its events (realtime-event-mapper.ts), so its calls are not told here.
 * One source for clients and the usage ledger alike: the ledger sums these.
 */
export class UsageEvents implements ProviderObserver {
  connected(): void {}

  call(call: ProviderCall): ProviderCallTrace {
    if (call.kind === "realtime") return UNTRACED;
    return {
      first: () => {},
      end: (_outcome, units) => {
        const payload = reported(units);
        if (!payload) return;
        call.session.emit({
          type: "usage.metrics",
          provider: call.provider,
          payload: { kind: call.kind, ...payload },
        });
      },
    };
  }
}

/** The units worth a report (finite, above zero), rounded to the millisecond; undefined when none is. */
function reported(units: ProviderCallUnits | undefined): ProviderCallUnits | undefined {
  if (!units) return undefined;
  const out: ProviderCallUnits = {};
  for (const key of ["sttSeconds", "ttsCharacters", "inputTokens", "outputTokens"] as const) {
    const value = units[key];
    if (typeof value === "number" && Number.isFinite(value) && value > 0)
      out[key] = key === "sttSeconds" ? Math.round(value * 1000) / 1000 : value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
