/**
 * What a configuration says about its realtime providers that the schema
 * cannot: a default provider with no entry (so no key), and an entry that
 * would call the vendor without a key. One check for `serve` and `doctor`
 * (validateConfig runs it), naming the environment variable that fixes it.
 */
import type { TalkgateConfig } from "./config-schema.js";

/** The variable that sets each known realtime provider's key (src/config/environment.ts). */
export const REALTIME_KEY_ENV: Readonly<Record<string, string>> = Object.freeze({
  openai: "OPENAI_API_KEY",
  xai: "XAI_API_KEY",
  gemini: "GEMINI_API_KEY",
});

export interface ProviderCheck {
  /** Start-up refuses these. */
  errors: string[];
  /** Start-up goes on and logs these. */
  warnings: string[];
}

export function checkProviders(config: TalkgateConfig): ProviderCheck {
  const errors: string[] = [];
  const warnings: string[] = [];
  const realtime = config.talk.realtime;
  const entries = realtime?.providers ?? {};
  const chosen = realtime?.provider;
  if (chosen !== undefined && REALTIME_KEY_ENV[chosen] !== undefined && entries[chosen] === undefined) {
    errors.push(
      `talk.realtime.provider: "${chosen}" has no key: set ${REALTIME_KEY_ENV[chosen]} (or talk.realtime.providers.${chosen}.apiKey)`,
    );
  }
  for (const [id, variable] of Object.entries(REALTIME_KEY_ENV)) {
    const entry = entries[id];
    // Without a key the vendor refuses every session; with its own baseUrl it is a local or proxied server.
    if (entry === undefined || entry.apiKey !== undefined || entry.baseUrl !== undefined) continue;
    warnings.push(
      `talk.realtime.providers.${id} has no apiKey: its sessions will fail until ${variable} (or talk.realtime.providers.${id}.apiKey) is set`,
    );
  }
  return { errors, warnings };
}
