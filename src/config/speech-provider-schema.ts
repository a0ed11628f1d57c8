import { z } from "zod";
import { freeForm, secret } from "./redact.js";

/**
 * `talk.providers.<id>`: speech (STT / TTS) provider settings. An entry with
 * `type: "openai-compatible"`, or with an `stt` or `tts` object, configures
 * OpenAI-compatible speech providers registered under `<id>` (one per kind it
 * names) and is validated strictly here. Other entries stay free-form
 * (reserved for other provider types; they configure nothing today).
 *
 * `baseUrl`, `apiKey` and `timeoutMs` at the entry's top level apply to both
 * kinds; `stt.*` / `tts.*` override them, so speech input and output may come
 * from two servers under one id. Defaults live in the providers' factories
 * (docs/providers.md).
 */

const positiveInt = z.number().int().positive();

/**
 * Ids of the embedded local engines: an entry may not take them. In order of preference: the first one
 * registered of a kind is its default and the rest its fallbacks (Moonshine before pocketsphinx: 2.4%
 * word errors against 22-48%, docs/performance.md).
 */
export const LOCAL_SPEECH_PROVIDER_IDS = ["espeak-ng", "moonshine", "pocketsphinx"] as const;

const endpointFields = {
  /** Endpoint root including the version, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: z.url().optional(),
  /** Bearer token (secret; never echoed). Local servers usually need none. */
  apiKey: secret(z.string().min(1)).optional(),
  /** Longest exchange per request, ms. */
  timeoutMs: positiveInt.optional(),
};

export const openAiSttSettingsSchema = z
  .object({
    ...endpointFields,
    model: z.string().min(1).optional(),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]+)*$/, 'a language code such as "en" or "en-US"')
      .optional(),
    prompt: z.string().max(4096).optional(),
    responseFormat: z.enum(["json", "text", "verbose_json"]).optional(),
    stream: z.union([z.boolean(), z.literal("auto")]).optional(),
    maxAudioSeconds: z.number().positive().max(3600).optional(),
    minAudioMs: z.number().int().min(0).optional(),
  })
  .strict();

export const openAiTtsSettingsSchema = z
  .object({
    ...endpointFields,
    model: z.string().min(1).optional(),
    voice: z.string().min(1).optional(),
    voices: z.array(z.string().min(1)).min(1).optional(),
    instructions: z.string().max(4096).optional(),
    sampleRate: z.union([8000, 16_000, 22_050, 24_000, 44_100, 48_000].map((r) => z.literal(r))).optional(),
    maxTextLength: positiveInt.optional(),
  })
  .strict();

export const openAiSpeechProviderSchema = z
  .object({
    type: z.literal("openai-compatible").optional(),
    ...endpointFields,
    stt: openAiSttSettingsSchema.optional(),
    tts: openAiTtsSettingsSchema.optional(),
  })
  .strict()
  .refine((v) => v.stt !== undefined || v.tts !== undefined, {
    message: "an openai-compatible speech provider needs an stt or a tts object (or both)",
  });

export type OpenAiSpeechProviderSettings = z.output<typeof openAiSpeechProviderSchema>;

/** Whether a `talk.providers` entry is an OpenAI-compatible speech provider. */
export function isOpenAiSpeechEntry(value: Record<string, unknown>): boolean {
  if (value.type !== undefined) return value.type === "openai-compatible";
  return value.stt !== undefined || value.tts !== undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The record under `talk.providers`. */
export const speechProvidersSchema = z
  .record(
    z.string().min(1),
    // Free-form (seed 001); an entry that is not an OpenAI-compatible one is secret as a whole when echoed.
    freeForm(z.record(z.string(), z.unknown()), (value) =>
      isRecord(value) && isOpenAiSpeechEntry(value) ? openAiSpeechProviderSchema : undefined,
    ),
  )
  .superRefine((entries, ctx) => {
    for (const [id, value] of Object.entries(entries)) {
      if (value.type !== undefined && value.type !== "openai-compatible") {
        ctx.addIssue({
          code: "custom",
          path: [id, "type"],
          message: `unknown speech provider type "${String(value.type)}" (known: openai-compatible)`,
        });
        continue;
      }
      if (!isOpenAiSpeechEntry(value)) continue;
      if ((LOCAL_SPEECH_PROVIDER_IDS as readonly string[]).includes(id)) {
        ctx.addIssue({
          code: "custom",
          path: [id],
          message: `"${id}" is the id of a local engine; choose another`,
        });
        continue;
      }
      const parsed = openAiSpeechProviderSchema.safeParse(value);
      if (parsed.success) continue;
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: "custom", path: [id, ...issue.path], message: issue.message });
      }
    }
  });

/** The OpenAI-compatible entries of `talk.providers`, parsed, in configuration order. */
export function openAiSpeechEntries(
  providers: Record<string, Record<string, unknown>> | undefined,
): [string, OpenAiSpeechProviderSettings][] {
  return Object.entries(providers ?? {})
    .filter(([, value]) => isOpenAiSpeechEntry(value))
    .map(([id, value]) => [id, openAiSpeechProviderSchema.parse(value)]);
}
