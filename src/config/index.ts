export * from "./config-schema.js";
export { loadConfig, validateConfig, type LoadConfigOptions, type LoadedConfig } from "./load-config.js";
export { ENV_OVERRIDES } from "./environment.js";
export { redactSecrets, redactText, redactUrl, isSecretKey, REDACTED } from "./redact.js";
export { runDoctor, formatDoctorReport, type DoctorReport, type DoctorOptions } from "./doctor.js";
export { migrateLegacyRealtime, findLegacyRealtimeKeys } from "./legacy-realtime.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { CALL_MODES } from "./telephony-schema.js";
export { AMD_GREET, AMD_POLICIES, type AmdConfig, type AmdGreet, type AmdPolicy } from "./amd-schema.js";
export type { CallMode, RecordingConfig, TelephonyConfig } from "./telephony-schema.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { KNOWN_REALTIME_PROVIDER_IDS } from "./realtime-provider-schema.js";
export { secret } from "./redact.js";
export {
  LOCAL_SPEECH_PROVIDER_IDS,
  openAiSpeechEntries,
  openAiSpeechProviderSchema,
} from "./speech-provider-schema.js";
