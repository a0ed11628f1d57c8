// What the meetings surface offers the composition root and tests.
export * from "./bot-status.js";
export {
  MEETINGS_DEFAULTS,
  resolveMeetingsOptions,
  type MeetingsOptions,
  type MeetingsWebhookOptions,
  type ResolvedMeetingsOptions,
} from "./meetings-options.js";
export { meetingsPlugin, type MeetingsPluginOptions } from "./meetings-plugin.js";
export { meetingsRoutes, type MeetingsRoutesOptions, type MeetingsScope } from "./http/meetings-routes.js";
export { BotManager, type BotManagerOptions, type CreateBotRequest } from "./bot/bot-manager.js";
export {
  ChromiumLauncher,
  BOT_CHROMIUM_ARGS,
  type BrowserLauncher,
  type LaunchedBrowser,
  type LaunchRequest,
} from "./bot/browser-launcher.js";
export { signWebhook } from "./bot/webhook-notifier.js";
export type { TranscriptLine } from "./bot/transcript-log.js";
export type {
  PlatformDriver,
  DriverPage,
  MeetingObservation,
  MeetingPhase,
} from "./platforms/platform-driver.js";
export { defaultPlatformDrivers } from "./platforms/index.js";
export {
  VoiceWakeStore,
  normalizeTriggers,
  type VoiceWakeState,
  type VoiceWakeStoreOptions,
} from "./agent/voice-wake-store.js";
export { registerMeetingsMethods, type MeetingsMethodsDeps } from "./talk-api/meetings-methods.js";
