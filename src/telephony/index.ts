// What the telephony surface offers the composition root and tests.
export {
  telephonyPlugin,
  type CarrierMode,
  type Telephony,
  type TelephonyPlugin,
  type TelephonyPluginOptions,
} from "./telephony-plugin.js";
export { configuredCarriers, defaultCarrierId, type ConfiguredCarrier } from "./carriers.js";
export { clusterDetectionWorkers } from "./amd/amd-relay.js";
export { clusterCallDirectory, type CallDirectory } from "./call-directory.js";
export type { CarrierProtocol } from "./carrier/carrier-protocol.js";
export { CallSession, type CallIdentity, type CallSettings, type CallState } from "./call-session.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { CarrierMessageBuilder } from "./twilio/carrier-messages.js";
export { CarrierPlayback, ULAW_BYTES_PER_MS } from "./twilio/carrier-playback.js";
export { computeTwilioSignature } from "./twilio/twilio-signature.js";
