import type {
  AgentProvider,
  AudioFormat,
  RealtimeVoiceSession,
  RealtimeProvider,
  RealtimeProviderEvent,
  SttProvider,
  TalkSession,
  TtsProvider,
} from "../core/index.js";
import type { PipelineProviderResolver } from "../voice/index.js";
import { bytesPerSecond } from "../codecs/index.js";

export type ProviderCallKind = "stt" | "agent" | "tts" | "realtime";

/** One provider call as the observers see it: a transcription, a consult, a synthesis, a realtime response. */
export interface ProviderCall {
  readonly kind: ProviderCallKind;
  readonly provider: string;
  readonly session: TalkSession;
  /** The turn it works for, when the session had one when it started. */
  readonly turnId: string | undefined;
}

/**
 * What one call used: stt the seconds of audio heard, tts the characters spoken, agent the tokens it
 * reported (an agent that reports none leaves them out).
 */
export interface ProviderCallUnits {
  sttSeconds?: number;
  ttsCharacters?: number;
  inputTokens?: number;
  outputTokens?: number;
}

/** Marks in a call's life; each is called at most once, `end` last. */
export interface ProviderCallTrace {
  /** The first output (audio for tts and realtime, text for agent and stt partials) arrived. */
  first(): void;
  /** It finished. `units`: what it used (the session's usage.metrics, the usage ledger). */
  end(outcome: "ok" | "error" | "cancelled", units?: ProviderCallUnits): void;
}

/** Who wants to know about provider calls (metrics, traces, the ledger). Must not throw. */
export interface ProviderObserver {
  /** A realtime provider session was opened (or failed to open) in `ms`. */
  connected(call: ProviderCall, ms: number, ok: boolean): void;
  call(call: ProviderCall): ProviderCallTrace;
  /** Audio sent to a realtime provider session, in seconds, reported when the session closes. */
  inputAudio?(call: ProviderCall, seconds: number): void;
}

/**
 * The pipelines' provider resolver with every provider call observed: time
 * to connect, to first output and to the end, and what it used. Providers
 * are wrapped, never replaced (their own methods do the work), so a
 * pipeline cannot tell the difference.
 */
export function observedProviders(
  base: PipelineProviderResolver,
  observer: ProviderObserver,
): PipelineProviderResolver {
  return {
    stt: (session) => {
      const provider = base.stt(session);
      return provider && observedProvider(provider, session, observer);
    },
    tts: (session) => {
      const provider = base.tts(session);
      return provider && observedProvider(provider, session, observer);
    },
    agent: (session) => {
      const provider = base.agent(session);
      return provider && observedProvider(provider, session, observer);
    },
    realtime: (session) => {
      const provider = base.realtime(session);
      return provider && observedProvider(provider, session, observer);
    },
  };
}

/** Any provider kind a pipeline resolves. */
export type PipelineProvider = SttProvider | TtsProvider | AgentProvider | RealtimeProvider;

/**
 * One provider with its calls observed as calls of `session`. The wrapper is
 * bound to that session: a wrapper made for one session must never serve
 * another (its calls would be counted, timed and traced as the first one's).
 */
export function observedProvider<P extends PipelineProvider>(
  provider: P,
  session: TalkSession,
  observer: ProviderObserver,
): P {
  switch (provider.kind) {
    case "stt":
      return observeStt(provider, session, observer) as P;
    case "tts":
      return observeTts(provider, session, observer) as P;
    case "agent":
      return observeAgent(provider, session, observer) as P;
    case "realtime":
      return observeRealtime(provider, session, observer) as P;
  }
}

/**
 * `target` with some methods replaced. Everything else is the target's own,
 * called on the target itself (a Proxy, not Object.create: methods that use
 * private `#fields` must run with the real object as `this`).
 */
function overlay<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return (overrides as Record<PropertyKey, unknown>)[property];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(object) : value;
    },
  });
}

function describe(kind: ProviderCallKind, provider: string, session: TalkSession): ProviderCall {
  return { kind, provider, session, turnId: session.activeTurn?.id };
}

function outcomeOf(err: unknown, signal: AbortSignal): "error" | "cancelled" {
  return signal.aborted || (err as { code?: string } | null)?.code === "cancelled" ? "cancelled" : "error";
}

function observeStt(provider: SttProvider, session: TalkSession, observer: ProviderObserver): SttProvider {
  const startStream: SttProvider["startStream"] = (options) => {
    const trace = observer.call(describe("stt", provider.id, session));
    let samples = 0;
    let first = false;
    const stream = provider.startStream({
      ...options,
      onPartial: (text) => {
        if (!first) {
          first = true;
          trace.first();
        }
        options.onPartial?.(text);
      },
    });
    const seconds = (): number => samples / (options.format.sampleRate * options.format.channels);
    return {
      write: (pcm) => {
        stream.write(pcm);
        samples += pcm.length;
      },
      pause: () => stream.pause?.(),
      resume: () => stream.resume?.(),
      finish: async () => {
        try {
          const result = await stream.finish();
          trace.end("ok", { sttSeconds: seconds() });
          return result;
        } catch (err) {
          trace.end(outcomeOf(err, options.signal), { sttSeconds: seconds() });
          throw err;
        }
      },
    };
  };
  return overlay(provider, { startStream });
}

function observeTts(provider: TtsProvider, session: TalkSession, observer: ProviderObserver): TtsProvider {
  const synthesize: TtsProvider["synthesize"] = async function* synthesize(request) {
    const trace = observer.call(describe("tts", provider.id, session));
    let first = false;
    let ended = false;
    try {
      for await (const chunk of provider.synthesize(request)) {
        if (!first) {
          first = true;
          trace.first();
        }
        yield chunk;
      }
      ended = true;
      trace.end("ok", { ttsCharacters: request.text.length });
    } catch (err) {
      ended = true;
      trace.end(outcomeOf(err, request.signal), { ttsCharacters: request.text.length });
      throw err;
    } finally {
      // The consumer stopped reading early (barge-in): what was asked for was still synthesized in part.
      if (!ended) trace.end("cancelled", { ttsCharacters: request.text.length });
    }
  };
  return overlay(provider, { synthesize });
}

function observeAgent(
  provider: AgentProvider,
  session: TalkSession,
  observer: ProviderObserver,
): AgentProvider {
  const consult: AgentProvider["consult"] = async function* consult(request) {
    const trace = observer.call({ ...describe("agent", provider.id, session), turnId: request.turnId });
    let first = false;
    let ended = false;
    let usage: ProviderCallUnits | undefined;
    try {
      for await (const delta of provider.consult(request)) {
        if (!first && delta.type === "text") {
          first = true;
          trace.first();
        }
        if (delta.type === "done" && delta.usage) usage = { ...delta.usage };
        yield delta;
      }
      ended = true;
      trace.end("ok", usage);
    } catch (err) {
      ended = true;
      trace.end(outcomeOf(err, request.signal), usage);
      throw err;
    } finally {
      // A consumer may stop reading at `done`: the tokens it reported still count.
      if (!ended) trace.end(usage ? "ok" : "cancelled", usage);
    }
  };
  return overlay(provider, { consult });
}

function observeRealtime(
  provider: RealtimeProvider,
  session: TalkSession,
  observer: ProviderObserver,
): RealtimeProvider {
  const connect = provider.connect?.bind(provider);
  if (!connect) return provider;
  const observedConnect: NonNullable<RealtimeProvider["connect"]> = async (options, onEvent) => {
    const responses = new Map<string, { trace: ProviderCallTrace; first: boolean }>();
    const watch = (event: RealtimeProviderEvent): void => {
      if (event.type === "response_started") {
        responses.set(event.responseId, {
          trace: observer.call(describe("realtime", provider.id, session)),
          first: false,
        });
      } else if (event.type === "audio_delta") {
        const response = responses.get(event.responseId);
        if (response && !response.first) {
          response.first = true;
          response.trace.first();
        }
      } else if (event.type === "response_done") {
        const response = responses.get(event.responseId);
        responses.delete(event.responseId);
        response?.trace.end(
          event.status === "completed" ? "ok" : event.status === "failed" ? "error" : "cancelled",
        );
      } else if (event.type === "closed") {
        for (const response of responses.values()) response.trace.end("cancelled");
        responses.clear();
      }
    };
    const started = performance.now();
    const call = describe("realtime", provider.id, session);
    try {
      const voice = await connect(options, (event) => {
        try {
          watch(event);
        } finally {
          onEvent(event);
        }
      });
      observer.connected(call, performance.now() - started, true);
      return countedInput(voice, options.inputFormat, (seconds) => observer.inputAudio?.(call, seconds));
    } catch (err) {
      observer.connected(call, performance.now() - started, false);
      throw err;
    }
  };
  return overlay(provider, { connect: observedConnect });
}

/**
 * The voice session with the audio appended to it counted; the total is reported once, at close.
 * A plain object that delegates each method (not `overlay`'s Proxy): `appendAudio` runs for every
 * caller frame of every call, and a Proxy's get trap was about 1% of a relaying server's CPU
 * (bench/relay-cpu-perf.ts). An optional method is there exactly when the session has it.
 */
function countedInput(
  voice: RealtimeVoiceSession,
  format: AudioFormat,
  report: (seconds: number) => void,
): RealtimeVoiceSession {
  let bytes = 0;
  let reported = false;
  const counted: RealtimeVoiceSession = {
    appendAudio: (data, base64) => {
      bytes += data.byteLength;
      voice.appendAudio(data, base64);
    },
    cancelResponse: () => voice.cancelResponse(),
    truncate: (itemId, audioEndMs) => voice.truncate(itemId, audioEndMs),
    submitToolResult: (callId, output, options) => voice.submitToolResult(callId, output, options),
    createResponse: (instructions) => voice.createResponse(instructions),
    close: async () => {
      // Opus has no byte rate (0): its seconds are not counted from bytes.
      const rate = bytesPerSecond(format);
      if (!reported && rate > 0) {
        reported = true;
        report(bytes / rate);
      }
      return voice.close();
    },
  };
  if (voice.commitAudio) counted.commitAudio = () => voice.commitAudio!();
  if (voice.speakText) counted.speakText = (text, options) => voice.speakText!(text, options);
  if (voice.setTurnDetection) counted.setTurnDetection = (enabled) => voice.setTurnDetection!(enabled);
  if (voice.sendText) counted.sendText = (text) => voice.sendText!(text);
  return counted;
}
