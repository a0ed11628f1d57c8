/**
 * What `talk.session.create` may name beside mode and transport, checked
 * against the registered providers before a session exists (so nothing is
 * stamped with an id nobody serves): `provider` must be a provider of a kind
 * the mode uses, `voice` and `model` must reach a provider that declares
 * them, anything else is `invalid_params` naming the field.
 */
import { TalkError } from "../core/index.js";
import type { ProviderRegistry } from "../core/index.js";
import type { ProviderResolver } from "../core/index.js";
import type {
  AgentProvider,
  ProviderKind,
  RealtimeProvider,
  RealtimeReplyPath,
  SttProvider,
  TalkProvider,
} from "../core/index.js";
import { replyPathProblem } from "../voice/index.js";
import type { SessionProviders, TalkBrain, TalkMode } from "../core/index.js";

export interface SessionRequestFields {
  mode: TalkMode;
  provider?: string | undefined;
  voice?: string | undefined;
  model?: string | undefined;
  /** Realtime only: the session's reply path (seed 003), checked against the providers that would run it. */
  replyPath?: RealtimeReplyPath | undefined;
}

/** The provider kinds `provider` may name per mode (talk.provider names the speech provider of stt-tts). */
const PROVIDER_KINDS: Record<TalkMode, readonly ProviderKind[]> = {
  realtime: ["realtime"],
  transcription: ["stt"],
  "stt-tts": ["stt", "tts"],
};

function refuse(path: string, message: string, reason?: string): never {
  throw new TalkError("invalid_params", `Invalid params: ${path}: ${message}`, {
    details: { issues: [{ path, message }], ...(reason !== undefined ? { field: path, reason } : {}) },
  });
}

/** The provider of `kind` a session of this request would use: the named one when it is of that kind, else the default. */
function chosen(
  registry: ProviderRegistry,
  resolver: ProviderResolver,
  kind: ProviderKind,
  id: string | undefined,
): TalkProvider | undefined {
  const wanted = id !== undefined && registry.has(kind, id) ? id : resolver.defaultId(kind);
  return wanted === undefined ? undefined : registry.list(kind).find((p) => p.id === wanted);
}

/**
 * The provider id per kind a checked request's session runs on, as the pipelines resolve them
 * (app/providers.ts): a realtime session its realtime provider, a transcription its recognizer, stt-tts
 * its recognizer, synthesizer and (agent-consult) agent; `provider` where it is of that kind, else the
 * default. A kind nothing serves is left out.
 */
export function sessionProvidersOf(
  registry: ProviderRegistry,
  resolver: ProviderResolver,
  request: { mode: TalkMode; brain: TalkBrain; provider?: string | undefined },
): SessionProviders {
  const kinds: ("stt" | "tts" | "agent" | "realtime")[] =
    request.mode === "realtime"
      ? ["realtime"]
      : request.mode === "transcription"
        ? ["stt"]
        : request.brain === "agent-consult"
          ? ["stt", "tts", "agent"]
          : ["stt", "tts"];
  const out: Partial<Record<(typeof kinds)[number], string>> = {};
  for (const kind of kinds) {
    // The agent is never named by a request: always the default.
    const id = chosen(registry, resolver, kind, kind === "agent" ? undefined : request.provider)?.id;
    if (id !== undefined) out[kind] = id;
  }
  return out;
}

/** Throws invalid_params (details.issues naming the field) when the request names what no provider serves. */
export function checkSessionRequest(
  registry: ProviderRegistry,
  resolver: ProviderResolver,
  request: SessionRequestFields,
): void {
  const { mode, provider, voice, model } = request;
  const kinds = PROVIDER_KINDS[mode];
  if (provider !== undefined && !kinds.some((kind) => registry.has(kind, provider))) {
    const known = kinds.flatMap((kind) => registry.list(kind).map((p) => p.id));
    refuse(
      "provider",
      `no ${kinds.join(" or ")} provider "${provider}" is configured (known: ${[...new Set(known)].join(", ") || "none"})`,
    );
  }
  if (request.replyPath !== undefined) {
    if (mode !== "realtime")
      refuse("replyPath", `a ${mode} session has no reply path (only realtime sessions choose one)`, "mode");
    const realtime = chosen(registry, resolver, "realtime", provider) as RealtimeProvider | undefined;
    if (realtime === undefined) refuse("replyPath", "no realtime provider is configured");
    const problem = replyPathProblem(request.replyPath, realtime, {
      stt: chosen(registry, resolver, "stt", undefined) as SttProvider | undefined,
      agent: chosen(registry, resolver, "agent", undefined) as AgentProvider | undefined,
    });
    if (problem) refuse("replyPath", problem.message, problem.reason);
  }
  // Realtime sessions hand voice and model to the realtime provider, which checks them itself.
  if (mode === "realtime") return;
  if (model !== undefined)
    refuse(
      "model",
      `a ${mode} session takes no model (speech-to-text and TTS providers use their configured one)`,
    );
  if (voice === undefined) return;
  if (mode === "transcription") refuse("voice", "a transcription session has no audio output");
  const tts = chosen(registry, resolver, "tts", provider);
  const voices = tts?.capabilities.voices ?? [];
  if (tts === undefined) refuse("voice", "no TTS provider is configured");
  if (voices.length > 0 && !voices.includes(voice))
    refuse("voice", `TTS provider "${tts.id}" has no voice "${voice}" (declared: ${voices.join(", ")})`);
}
