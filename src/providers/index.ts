// Provider factories. The lead's registry maps configuration onto these options.
import type { TalkProvider } from "../core/provider-types.js";
import { createEspeakTts, type EspeakTtsOptions } from "./espeak-ng/espeak-tts.js";
import { createLocalAgent, type LocalAgentOptions } from "./local-agent/local-agent.js";
import { createPocketsphinxStt, type PocketsphinxSttOptions } from "./pocketsphinx/pocketsphinx-stt.js";

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

/** Options of the embedded default: local engines only, no network, no keys. */
export interface LocalProvidersOptions {
  /** espeak-ng TTS options; false leaves it out. Default {}. */
  tts?: EspeakTtsOptions | false;
  /** pocketsphinx STT options; false leaves it out. Default {}. */
  stt?: PocketsphinxSttOptions | false;
  /** Built-in rule-based agent options; false leaves it out. Default {}. */
  agent?: LocalAgentOptions | false;
}

/** The local providers (TTS, STT, agent) of the embedded default, in that order. */
export function createLocalProviders(options: LocalProvidersOptions = {}): TalkProvider[] {
  const providers: TalkProvider[] = [];
  if (options.tts !== false) providers.push(createEspeakTts(options.tts ?? {}));
  if (options.stt !== false) providers.push(createPocketsphinxStt(options.stt ?? {}));
  if (options.agent !== false) providers.push(createLocalAgent(options.agent ?? {}));
  return providers;
}
