/**
 * Provider policy of the composition root: which providers the configuration
 * builds, which one of each kind is the default, and how a pipeline resolves
 * them per session.
 */
import type { TalkgateConfig } from "../config/index.js";
import { LOCAL_SPEECH_PROVIDER_IDS, openAiSpeechEntries } from "../config/index.js";
import { TalkError, WindowedLogLimiter } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { PipelineProviderResolver } from "../voice/index.js";
import { ProviderOutcomes } from "../core/index.js";
import { ProviderRegistry, type ProviderByKind } from "../core/index.js";
import { ProviderResolver, type ProviderDefaults } from "../core/index.js";
import type { ProviderKind, TalkProvider } from "../core/index.js";
import type { TalkSession } from "../core/index.js";
import { KNOWN_REALTIME_PROVIDER_IDS } from "../config/index.js";
import {
  createGeminiLiveProvider,
  createLocalProviders,
  createOpenAiRealtimeProvider,
  createOpenAiSpeechProviders,
  createXaiRealtimeProvider,
} from "../providers/index.js";
import { createOpenAiChatAgent, MoonshineSttProvider } from "../providers/index.js";

/** The process's providers: the registry, its default per kind, and the pipelines' view of them. */
export interface AppProviders {
  readonly registry: ProviderRegistry;
  readonly resolver: ProviderResolver;
  /** Outcomes of every provider's real requests (each registered provider reports here), for /readyz. */
  readonly outcomes: ProviderOutcomes;
  /** What every pipeline resolves its providers through (the session's own stt / realtime provider first). */
  readonly pipeline: PipelineProviderResolver;
  /** The default provider of `kind` (or `id`), or undefined when none is configured. */
  optional<K extends ProviderKind>(kind: K, id?: string): ProviderByKind[K] | undefined;
  /** A realtime provider the gateway can relay is registered (telephony then defaults to realtime). */
  realtimeRelayAvailable(): boolean;
}

/** The object without its undefined fields (exactOptionalPropertyTypes: options are absent, not undefined). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

/** Builds the providers the configuration asks for: local engines always, cloud ones when configured. */
export function configuredProviders(config: TalkgateConfig): TalkProvider[] {
  const providers: TalkProvider[] = createLocalProviders({
    agent: config.agent.endpoint ? false : {},
    stt: definedOnly(config.talk.local.pocketsphinx),
    moonshine: definedOnly(config.talk.local.moonshine),
  });
  const endpoint = config.agent.endpoint;
  if (endpoint) {
    providers.push(
      createOpenAiChatAgent({
        baseUrl: endpoint.baseUrl,
        model: endpoint.model,
        timeoutMs: endpoint.timeoutMs,
        streamUsage: endpoint.streamUsage,
        ...(endpoint.apiKey !== undefined ? { apiKey: endpoint.apiKey } : {}),
      }),
    );
  }
  // talk.providers.<id> (openai-compatible): an STT and / or a TTS provider under that id.
  for (const [id, settings] of openAiSpeechEntries(config.talk.providers)) {
    providers.push(...createOpenAiSpeechProviders(id, settings));
  }
  providers.push(...realtimeProviders(config));
  return providers;
}

/**
 * The wiring table of realtime providers: `talk.realtime.providers.<id>` for
 * a known id builds that provider. `talk.realtime.model` / `.voice` apply to
 * the default realtime provider (`talk.realtime.provider`; OpenAI when none
 * is named, as before); an entry's own `model` / `voice` win.
 */
const REALTIME_FACTORIES: Readonly<
  Record<
    string,
    (settings: { apiKey?: string; baseUrl?: string; model?: string; voice?: string }) => TalkProvider
  >
> = Object.freeze({
  openai: (s) => createOpenAiRealtimeProvider({ id: "openai", ...s }),
  xai: (s) => createXaiRealtimeProvider({ id: "xai", ...s }),
  gemini: (s) => createGeminiLiveProvider({ id: "gemini", ...s }),
});

function realtimeProviders(config: TalkgateConfig): TalkProvider[] {
  const realtime = config.talk.realtime;
  const out: TalkProvider[] = [];
  for (const [id, factory] of Object.entries(REALTIME_FACTORIES)) {
    const entry = realtime?.providers?.[id];
    if (!entry) continue;
    const isDefault = (realtime?.provider ?? "openai") === id;
    const str = (key: string): string | undefined =>
      typeof entry[key] === "string" ? entry[key] : undefined;
    out.push(
      factory(
        definedOnly({
          apiKey: str("apiKey"),
          baseUrl: str("baseUrl"),
          model: str("model") ?? (isDefault ? realtime?.model : undefined),
          voice: str("voice") ?? (isDefault ? realtime?.voice : undefined),
        }),
      ),
    );
  }
  return out;
}

/** Why a local engine cannot work here (its model is not installed), or undefined: checked before it becomes a default. */
function localEngineMissing(provider: TalkProvider): string | undefined {
  return provider instanceof MoonshineSttProvider ? provider.modelMissing() : undefined;
}

/**
 * Default provider id per kind. `talk.provider` names the speech provider and
 * applies to each speech kind that has a provider of that id; naming one that
 * exists for no kind is a configuration error, found at start-up. Unset, the
 * one `talk.providers` entry is the speech provider when there is exactly one.
 * A speech kind it does not cover keeps its local engine when several
 * providers of that kind are registered (the others are reachable by id): the
 * first of LOCAL_SPEECH_PROVIDER_IDS (Moonshine for STT) unless `missing`
 * says it cannot load, then the next (pocketsphinx), with a warning.
 */
function providerDefaults(
  config: TalkgateConfig,
  registry: ProviderRegistry,
  missing: ReadonlyMap<string, string>,
  logger: TalkLogger,
): ProviderDefaults {
  const defaults: ProviderDefaults = {};
  const configured = openAiSpeechEntries(config.talk.providers).map(([id]) => id);
  const speech = config.talk.provider ?? (configured.length === 1 ? configured[0] : undefined);
  if (speech !== undefined) {
    const kinds = (["stt", "tts"] as const).filter((kind) => registry.has(kind, speech));
    if (kinds.length === 0) {
      const known = [...new Set([...registry.list("stt"), ...registry.list("tts")].map((p) => p.id))];
      throw new TalkError(
        "config_invalid",
        `talk.provider: no speech provider "${speech}" is configured; the configured ones are ${known.join(", ")} (another service goes under talk.providers.<id>: docs/providers.md).`,
      );
    }
    for (const kind of kinds) defaults[kind] = speech;
  }
  for (const kind of ["stt", "tts"] as const) {
    if (defaults[kind] !== undefined || registry.list(kind).length < 2) continue;
    const locals = LOCAL_SPEECH_PROVIDER_IDS.filter((id) => registry.has(kind, id));
    const local = locals.find((id) => !missing.has(`${kind}:${id}`)) ?? locals[0];
    if (local === undefined) continue;
    for (const id of locals.slice(0, locals.indexOf(local))) {
      logger.warn(
        { kind, provider: id, fallback: local, reason: missing.get(`${kind}:${id}`) },
        `${missing.get(`${kind}:${id}`)}: ${kind === "stt" ? "speech recognition" : "speech output"} uses ${local} instead`,
      );
    }
    defaults[kind] = local;
  }
  const realtime = config.talk.realtime?.provider;
  if (realtime !== undefined) {
    if (!registry.has("realtime", realtime)) {
      throw new TalkError(
        "config_invalid",
        `talk.realtime.provider: no realtime provider "${realtime}" is configured (set talk.realtime.providers.${realtime}).`,
      );
    }
    defaults.realtime = realtime;
  }
  return defaults;
}

/** Registers `providers` (default: the configured ones) and resolves the defaults; config_invalid on a bad default. */
export function buildProviders(
  config: TalkgateConfig,
  logger: TalkLogger,
  providers: readonly TalkProvider[] = configuredProviders(config),
): AppProviders {
  const unread = Object.keys(config.talk.realtime?.providers ?? {}).filter(
    (id) => !KNOWN_REALTIME_PROVIDER_IDS.includes(id),
  );
  if (unread.length > 0) {
    // Free-form in the seed contract, so not refused; but say that nothing reads them (and they are never echoed).
    logger.warn(
      { ids: unread },
      `talk.realtime.providers: these entries configure no provider (known: ${KNOWN_REALTIME_PROVIDER_IDS.join(", ")}); their settings are never echoed`,
    );
  }
  const registry = new ProviderRegistry({ logger });
  const outcomes = new ProviderOutcomes({
    failureThreshold: config.runtime.providerFailureThreshold,
    retryAfterMs: config.runtime.providerRetryAfterMs,
    onFailure: providerFailureLog(logger),
  });
  const missing = new Map<string, string>();
  for (const provider of providers) {
    const reason = localEngineMissing(provider);
    if (reason !== undefined) missing.set(`${provider.kind}:${provider.id}`, reason);
  }
  // Registered monitored, so every request's outcome reaches readiness whoever makes it.
  for (const provider of providers) registry.register(outcomes.monitor(provider));
  const resolver = new ProviderResolver({
    registry,
    defaults: providerDefaults(config, registry, missing, logger),
  });
  const optional = <K extends ProviderKind>(kind: K, id?: string): ProviderByKind[K] | undefined => {
    try {
      return resolver.resolve(kind, id);
    } catch (err) {
      if (err instanceof TalkError && err.code === "provider_not_found") return undefined;
      throw err;
    }
  };
  return {
    registry,
    resolver,
    outcomes,
    optional,
    pipeline: {
      stt: (s: TalkSession) =>
        optional("stt", s.provider && registry.has("stt", s.provider) ? s.provider : undefined),
      tts: (s: TalkSession) =>
        optional("tts", s.provider && registry.has("tts", s.provider) ? s.provider : undefined),
      agent: () => optional("agent"),
      realtime: (s: TalkSession) => optional("realtime", s.provider),
    },
    realtimeRelayAvailable: () =>
      registry.list().some((p) => p.kind === "realtime" && p.capabilities.gatewayRelay === true),
  };
}

/**
 * One warning per failed provider request (a connection that could not be
 * made, a key refused, an upstream error), rate-limited per provider like
 * other fault logs: the operator sees an unreachable provider in the log,
 * not only in /readyz.
 */
function providerFailureLog(logger: TalkLogger): (kind: ProviderKind, id: string, err: unknown) => void {
  const limiter = new WindowedLogLimiter();
  return (kind, id, err) => {
    const decision = limiter.take(`${kind}/${id}`);
    if (!decision.log) return;
    const code = err instanceof TalkError ? err.code : "provider_error";
    const message = err instanceof Error ? err.message : String(err);
    logger.warn(
      { kind, provider: id, code, ...(decision.suppressed > 0 ? { suppressed: decision.suppressed } : {}) },
      `${kind} provider ${id} failed: ${message}`,
    );
  };
}
