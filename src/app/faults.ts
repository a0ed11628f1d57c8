/**
 * The failure path's parts that the composition root owns: the lines spoken
 * on a provider fault, rendered once at start-up by the local TTS, and the
 * provider chains (retries, stall timeouts, fallbacks) every pipeline
 * resolves its STT, TTS and agent through (talk.faults).
 */
import type { TalkgateConfig } from "../config/index.js";
import { LOCAL_SPEECH_PROVIDER_IDS } from "../config/index.js";
import { TalkError } from "../core/index.js";
import { resolveFaultOptions, type ResolvedFaultOptions } from "../core/index.js";
import { PrerenderedSpeech, type FaultSpeech } from "../voice/index.js";
import { ResilientAgent, ResilientStt, ResilientTts, type ResilienceOptions } from "../voice/index.js";
import type { TalkLogger } from "../core/index.js";
import type { PipelineProviderResolver } from "../voice/index.js";
import type { ProviderRegistry } from "../core/index.js";
import type { AgentProvider, RealtimeProvider, SttProvider, TtsProvider } from "../core/index.js";
import type { TalkSession } from "../core/index.js";
import type { AudioFormat } from "../core/index.js";

/** The local engine that renders the lines (it runs here, without network or keys). */
const LOCAL_TTS_ID = "espeak-ng";

/** Longest a line may take to render at start-up, ms. */
const RENDER_TIMEOUT_MS = 15_000;

/** talk.faults as core's fault options. */
export function faultOptions(config: TalkgateConfig): ResolvedFaultOptions {
  const f = config.talk.faults;
  return resolveFaultOptions({
    policy: f.policy,
    firstByteTimeoutMs: f.firstByteTimeoutMs,
    interChunkTimeoutMs: f.interChunkTimeoutMs,
    retries: f.retries,
    retryBackoffMs: f.retryBackoffMs,
    maxConsecutiveFaults: f.maxConsecutiveFaults,
    holdingAfterMs: f.holdingAfterMs,
    retryFirstByteTimeoutMs: f.retryFirstByteTimeoutMs,
    hedgeAfterMs: f.hedgeAfterMs,
  });
}

/** Synthesizes `text` with `tts` into one PCM16 buffer (the line's one format). */
export async function renderLine(tts: TtsProvider, text: string): Promise<PrerenderedSpeech> {
  const chunks: Int16Array[] = [];
  let format: AudioFormat | undefined;
  for await (const chunk of tts.synthesize({ text, signal: AbortSignal.timeout(RENDER_TIMEOUT_MS) })) {
    if (chunk.kind !== "pcm")
      throw new TalkError("config_invalid", `The local TTS answered ${chunk.format.encoding}, not PCM16.`);
    if (
      format &&
      (format.sampleRate !== chunk.format.sampleRate || format.channels !== chunk.format.channels)
    )
      throw new TalkError("config_invalid", "The local TTS changed format within one line.");
    format = chunk.format;
    chunks.push(chunk.samples.slice());
  }
  if (!format) throw new TalkError("config_invalid", `The local TTS rendered no audio for "${text}".`);
  const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    pcm.set(c, at);
    at += c.length;
  }
  return new PrerenderedSpeech(text, pcm, format);
}

/** Speaks a line with the local TTS on demand (a transfer's briefing as an audio file); undefined without one. */
export function localSpeech(
  registry: ProviderRegistry,
): ((text: string) => Promise<PrerenderedSpeech>) | undefined {
  if (!registry.has("tts", LOCAL_TTS_ID)) return undefined;
  const tts = registry.get("tts", LOCAL_TTS_ID)!;
  return (text) => renderLine(tts, text);
}

/**
 * The apology and the goodbye, rendered by the local TTS. Without it (not
 * installed, failing) the process still starts: faults are then reported
 * and the policy applied, but nothing is spoken; the log says so.
 */
export async function renderFaultSpeech(
  config: TalkgateConfig,
  registry: ProviderRegistry,
  logger: TalkLogger,
): Promise<FaultSpeech | undefined> {
  if (!registry.has("tts", LOCAL_TTS_ID)) {
    logger.warn("talk.faults: no local TTS to render the apology; provider faults will not be spoken");
    return undefined;
  }
  const tts = registry.get("tts", LOCAL_TTS_ID)!;
  try {
    const [apology, goodbye, holding] = await Promise.all([
      renderLine(tts, config.talk.faults.apology),
      renderLine(tts, config.talk.faults.goodbye),
      renderLine(tts, config.talk.faults.holding),
    ]);
    return { apology, goodbye, holding };
  } catch (err) {
    logger.warn(
      { err },
      "talk.faults: the apology could not be rendered; provider faults will not be spoken",
    );
    return undefined;
  }
}

/** Fallback ids per kind: configured, or the local engine for STT and TTS. Unknown ids are refused. */
function fallbacks(
  config: TalkgateConfig,
  registry: ProviderRegistry,
): Record<"stt" | "tts" | "agent", string[]> {
  const f = config.talk.faults.fallback;
  const local = (kind: "stt" | "tts"): string[] =>
    LOCAL_SPEECH_PROVIDER_IDS.filter((id) => registry.has(kind, id));
  const out = { stt: f.stt ?? local("stt"), tts: f.tts ?? local("tts"), agent: f.agent ?? [] };
  for (const kind of ["stt", "tts", "agent"] as const) {
    for (const id of out[kind]) {
      if (!registry.has(kind, id))
        throw new TalkError(
          "config_invalid",
          `talk.faults.fallback.${kind}: no ${kind} provider "${id}" is configured.`,
        );
    }
  }
  return out;
}

/**
 * What each provider of a session's chains is wrapped in before the chain is
 * made (the operations surface's observation: metrics, traces, the usage
 * ledger), bound to that session.
 */
export type SessionProviderWrap = <P extends SttProvider | TtsProvider | AgentProvider | RealtimeProvider>(
  provider: P,
  session: TalkSession,
) => P;

/**
 * Wraps a pipeline resolver: each STT, TTS and agent it resolves becomes a
 * chain (the resolved provider, then its fallbacks), retried and timed by
 * talk.faults. A chain is made per resolution, from providers wrapped for
 * that session by `wrap`: a chain kept across sessions would report every
 * later session's calls as the first one's (its usage was lost, issue 38).
 */
export function resilientResolver(
  config: TalkgateConfig,
  registry: ProviderRegistry,
  base: PipelineProviderResolver,
  logger: TalkLogger,
  wrap: SessionProviderWrap = (provider) => provider,
): PipelineProviderResolver {
  const shared: ResilienceOptions = { ...faultOptions(config), logger };
  const ids = fallbacks(config, registry);
  // Each session's view of its providers' health: health.changed when one fails or works again.
  const health = new WeakMap<TalkSession, Map<string, boolean>>();
  const optionsFor = (session: TalkSession): ResilienceOptions => ({
    ...shared,
    onOutcome: (provider, ok, error) => {
      let seen = health.get(session);
      if (!seen) health.set(session, (seen = new Map()));
      const key = `${provider.kind}:${provider.id}`;
      // Unknown counts as working: the first success says nothing new.
      if ((seen.get(key) ?? true) === ok || session.state !== "active") return;
      seen.set(key, ok);
      session.emit({
        type: "health.changed",
        provider: provider.id,
        payload: {
          ok,
          kind: provider.kind,
          ...(error ? { code: error.code, message: error.message } : {}),
        },
      });
    },
  });
  const chainOf = <P extends SttProvider | TtsProvider | AgentProvider>(
    session: TalkSession,
    primary: P | undefined,
  ): P[] | undefined => {
    if (!primary) return undefined;
    const rest = ids[primary.kind]
      .filter((id) => id !== primary.id)
      .map((id) => registry.get(primary.kind, id) as unknown as P);
    return [primary, ...rest].map((provider) => wrap(provider, session));
  };
  return {
    stt: (s) => {
      const chain = chainOf(s, base.stt(s));
      return chain && new ResilientStt(chain, optionsFor(s));
    },
    tts: (s) => {
      const chain = chainOf(s, base.tts(s));
      return chain && new ResilientTts(chain, optionsFor(s));
    },
    agent: (s) => {
      const chain = chainOf(s, base.agent(s));
      return chain && new ResilientAgent(chain, optionsFor(s));
    },
    realtime: (s) => {
      const provider = base.realtime(s);
      return provider && wrap(provider, s);
    },
  };
}
