/**
 * `talk.config`'s answer: the effective Talk configuration as the process
 * resolved it, never the raw `talk.*` object. Only settings something reads
 * appear: speech entries that configure a provider, realtime entries of the
 * ids this build wires, the resolved defaults. Free-form entries that
 * configure nothing are left out whole (the start-up warning names them).
 * Secrets are the fields the schema below marks with `secret()` (the same
 * marked schemas the configuration is checked with), redacted by that mark.
 */
import { z } from "zod";
import { talkSchema, type TalkgateConfig } from "../config/index.js";
import { secret } from "../config/index.js";
import { KNOWN_REALTIME_PROVIDER_IDS } from "../config/index.js";
import { openAiSpeechEntries, openAiSpeechProviderSchema } from "../config/index.js";
import { TALK_BRAINS, TALK_MODES, TALK_TRANSPORTS } from "../core/index.js";
import type { ProviderKind } from "../core/index.js";

const id = z.string().nullable();

/** One configured realtime provider as talk.config shows it. */
const realtimeEntrySchema = z
  .object({
    configured: z.literal(true),
    apiKey: secret(z.string()).optional(),
    baseUrl: z.string().optional(),
    model: z.string().optional(),
    voice: z.string().optional(),
  })
  .strict();

/** The shape of talk.config's answer, for the schema-driven redaction (every field it may hold). */
export const EFFECTIVE_CONFIG_SCHEMA = z.object({
  talk: z.object({
    providers: z.record(z.string(), openAiSpeechProviderSchema),
    realtime: z.object({
      provider: id,
      model: id,
      voice: id,
      mode: z.enum(TALK_MODES),
      transport: z.enum(TALK_TRANSPORTS).nullable(),
      brain: z.enum(TALK_BRAINS),
      providers: z.record(z.string(), realtimeEntrySchema),
    }),
    input: talkSchema.shape.input,
    output: talkSchema.shape.output,
    local: talkSchema.shape.local,
    faults: talkSchema.shape.faults,
  }),
  providers: z.object({ stt: id, tts: id, agent: id, realtime: id }),
});

export type EffectiveConfig = z.output<typeof EFFECTIVE_CONFIG_SCHEMA>;

/**
 * The effective configuration from the loaded config and the resolved
 * provider defaults (`providers.stt` / `.tts` / `.agent` / `.realtime`). `talk.realtime.model` / `.voice` are the default realtime
 * provider's (its own entry first); `mode` / `brain` are what a create request
 * that leaves them out starts from (`realtime`, `agent-consult` built in);
 * `transport` is null when none is configured.
 */
export function effectiveConfigOf(
  config: TalkgateConfig,
  defaultId: (kind: ProviderKind) => string | undefined,
): EffectiveConfig {
  const talk = config.talk;
  const realtime = talk.realtime;
  const realtimeProviders: Record<string, z.output<typeof realtimeEntrySchema>> = {};
  for (const rid of KNOWN_REALTIME_PROVIDER_IDS) {
    const entry = realtime?.providers?.[rid];
    if (!entry) continue;
    const out: z.output<typeof realtimeEntrySchema> = { configured: true };
    for (const key of ["apiKey", "baseUrl", "model", "voice"] as const) {
      const value = entry[key];
      if (typeof value === "string") out[key] = value;
    }
    realtimeProviders[rid] = out;
  }
  const defaultRealtime = defaultId("realtime") ?? null;
  const own = defaultRealtime === null ? undefined : realtimeProviders[defaultRealtime];
  return {
    talk: {
      providers: Object.fromEntries(openAiSpeechEntries(talk.providers)),
      realtime: {
        provider: defaultRealtime,
        model: own?.model ?? realtime?.model ?? null,
        voice: own?.voice ?? realtime?.voice ?? null,
        mode: realtime?.mode ?? "realtime",
        transport: realtime?.transport ?? null,
        brain: realtime?.brain ?? "agent-consult",
        providers: realtimeProviders,
      },
      input: talk.input,
      output: talk.output,
      local: talk.local,
      faults: talk.faults,
    },
    providers: {
      stt: defaultId("stt") ?? null,
      tts: defaultId("tts") ?? null,
      agent: defaultId("agent") ?? null,
      realtime: defaultRealtime,
    },
  };
}
