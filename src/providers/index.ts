// Provider factories. The lead's registry maps configuration onto these options.
import type { TalkProvider } from "../core/index.js";
import { createEspeakTts, type EspeakTtsOptions } from "./espeak-ng/espeak-tts.js";
import { createLocalAgent, type LocalAgentOptions } from "./local-agent/local-agent.js";
import { createPocketsphinxStt, type PocketsphinxSttOptions } from "./pocketsphinx/pocketsphinx-stt.js";
import { createMoonshineStt, type MoonshineSttOptions } from "./moonshine/moonshine-stt.js";
import { createOpenAiStt, type OpenAiSttOptions } from "./openai-compatible/openai-stt.js";
import { createOpenAiTts, type OpenAiTtsOptions } from "./openai-compatible/openai-tts.js";

export {
  createEspeakTts,
  EspeakTtsProvider,
  ESPEAK_OUTPUT_FORMAT,
  type EspeakTtsOptions,
} from "./espeak-ng/espeak-tts.js";
export {
  createPocketsphinxStt,
  PocketsphinxSttProvider,
  type PocketsphinxSttOptions,
} from "./pocketsphinx/pocketsphinx-stt.js";
export {
  createMoonshineStt,
  MoonshineSttProvider,
  MOONSHINE_STT_DEFAULTS,
  type MoonshineSttOptions,
} from "./moonshine/moonshine-stt.js";
export {
  createLocalAgent,
  LocalAgentProvider,
  LOCAL_AGENT_HELP,
  type LocalAgentOptions,
} from "./local-agent/local-agent.js";
export {
  createOpenAiRealtimeProvider,
  OpenAiRealtimeProvider,
  OPENAI_REALTIME_VOICES,
  type OpenAiRealtimeOptions,
} from "./openai-realtime/openai-realtime-provider.js";
export { mintClientSecret, type MintedClientSecret } from "./openai-realtime/openai-client-secrets.js";
export {
  createXaiRealtimeProvider,
  XaiRealtimeProvider,
  XAI_REALTIME_VOICES,
  type XaiRealtimeOptions,
} from "./xai-realtime/xai-realtime-provider.js";
export {
  createGeminiLiveProvider,
  GeminiLiveProvider,
  GEMINI_LIVE_VOICES,
  type GeminiLiveOptions,
} from "./gemini-live/gemini-live-provider.js";
export {
  createOpenAiStt,
  OpenAiSttProvider,
  OPENAI_STT_DEFAULTS,
  type OpenAiSttOptions,
} from "./openai-compatible/openai-stt.js";
export {
  createOpenAiTts,
  OpenAiTtsProvider,
  OPENAI_TTS_DEFAULTS,
  type OpenAiTtsOptions,
} from "./openai-compatible/openai-tts.js";

/** Options of the embedded default: local engines only, no network, no keys. */
export interface LocalProvidersOptions {
  /** espeak-ng TTS options; false leaves it out. Default {}. */
  tts?: EspeakTtsOptions | false;
  /** pocketsphinx STT options; false leaves it out. Default {}. */
  stt?: PocketsphinxSttOptions | false;
  /** Built-in rule-based agent options; false leaves it out. Default {}. */
  agent?: LocalAgentOptions | false;
  /** Moonshine STT options (a second local recognizer, chosen by id); false leaves it out. Default {}. */
  moonshine?: MoonshineSttOptions | false;
}

/** The local providers (TTS, STT, agent) of the embedded default, in that order. */
export function createLocalProviders(options: LocalProvidersOptions = {}): TalkProvider[] {
  const providers: TalkProvider[] = [];
  if (options.tts !== false) providers.push(createEspeakTts(options.tts ?? {}));
  if (options.stt !== false) providers.push(createPocketsphinxStt(options.stt ?? {}));
  if (options.moonshine !== false) providers.push(createMoonshineStt(options.moonshine ?? {}));
  if (options.agent !== false) providers.push(createLocalAgent(options.agent ?? {}));
  return providers;
}

/** One `talk.providers.<id>` entry of type openai-compatible: shared endpoint fields, per-kind settings. */
export interface OpenAiSpeechSettings {
  baseUrl?: string;
  apiKey?: string;
  timeoutMs?: number;
  stt?: Omit<OpenAiSttOptions, "id">;
  tts?: Omit<OpenAiTtsOptions, "id">;
}

/**
 * The OpenAI-compatible speech providers of one settings entry, both under
 * `id`: an STT provider when `stt` is set, a TTS provider when `tts` is set.
 * The entry's baseUrl / apiKey / timeoutMs apply to each kind unless the kind
 * sets its own.
 */
export function createOpenAiSpeechProviders(id: string, settings: OpenAiSpeechSettings): TalkProvider[] {
  const shared = {
    ...(settings.baseUrl !== undefined ? { baseUrl: settings.baseUrl } : {}),
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.timeoutMs !== undefined ? { timeoutMs: settings.timeoutMs } : {}),
  };
  const providers: TalkProvider[] = [];
  if (settings.stt) providers.push(createOpenAiStt({ ...shared, ...definedOnly(settings.stt), id }));
  if (settings.tts) providers.push(createOpenAiTts({ ...shared, ...definedOnly(settings.tts), id }));
  return providers;
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { createOpenAiChatAgent } from "./openai-compatible/openai-chat-agent.js";
