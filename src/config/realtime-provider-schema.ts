import { z } from "zod";
import { freeForm, secret } from "./redact.js";

/**
 * `talk.realtime.providers.<id>`: realtime provider settings. Free-form in
 * the seed contract; an id this build knows (`openai`) is checked strictly
 * here, so a key it would ignore (`headers`, `key`, a misspelt `apikey`)
 * fails start-up naming it instead of being carried around unread. Entries
 * under other ids configure nothing and are secret as a whole when echoed.
 */
export const openAiRealtimeSettingsSchema = z
  .object({
    /** Bearer key (secret; never echoed). Env OPENAI_API_KEY. */
    apiKey: secret(z.string().min(1)).optional(),
    /** API root, default https://api.openai.com/v1 (a local server in tests). Env OPENAI_BASE_URL. */
    baseUrl: z.url().optional(),
  })
  .strict();

/** `talk.realtime.providers.xai` / `.gemini`: a key, an API root, and this provider's own model and voice. */
export const vendorRealtimeSettingsSchema = z
  .object({
    /** Server key (secret; never echoed). */
    apiKey: secret(z.string().min(1)).optional(),
    /** API root (a local server in tests); default the vendor's. */
    baseUrl: z.url().optional(),
    /** Model of this provider (default the provider's; talk.realtime.model applies to the default provider only). */
    model: z.string().min(1).optional(),
    /** Voice of this provider (as above). */
    voice: z.string().min(1).optional(),
  })
  .strict();

/** The realtime provider ids this build configures from settings, with their schema. */
const KNOWN_REALTIME_SETTINGS: Readonly<Record<string, z.ZodObject>> = Object.freeze({
  openai: openAiRealtimeSettingsSchema,
  xai: vendorRealtimeSettingsSchema,
  gemini: vendorRealtimeSettingsSchema,
});

/** Ids of the realtime providers this build configures from `talk.realtime.providers`. */
export const KNOWN_REALTIME_PROVIDER_IDS: readonly string[] = Object.freeze(
  Object.keys(KNOWN_REALTIME_SETTINGS),
);

export const realtimeProvidersSchema = z
  .record(
    z.string().min(1),
    freeForm(z.record(z.string(), z.unknown()), (_value, id) =>
      id === undefined ? undefined : KNOWN_REALTIME_SETTINGS[id],
    ),
  )
  .superRefine((entries, ctx) => {
    for (const [id, value] of Object.entries(entries)) {
      const schema = KNOWN_REALTIME_SETTINGS[id];
      if (!schema) continue;
      const parsed = schema.safeParse(value);
      if (parsed.success) continue;
      for (const issue of parsed.error.issues) {
        const message =
          issue.code === "unrecognized_keys"
            ? `unknown key(s) ${issue.keys.join(", ")} (known: ${Object.keys(schema.shape).join(", ")})`
            : issue.message;
        ctx.addIssue({ code: "custom", path: [id, ...issue.path], message });
      }
    }
  });
