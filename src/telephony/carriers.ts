/**
 * The carriers this server speaks, by config section: the one place that
 * names them. Each entry turns its `telephony.<id>` settings into a
 * CarrierProtocol and the base URL that carrier reaches us on. Adding a
 * carrier is a folder implementing CarrierProtocol and one entry here.
 */
import type { TelephonyConfig } from "../config/index.js";
import { TalkError } from "../core/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { telnyxProtocol } from "./telnyx/telnyx-protocol.js";
import { plivoProtocol } from "./plivo/plivo-protocol.js";
import { twilioProtocol } from "./twilio/twilio-protocol.js";
import { vonageProtocol } from "./vonage/vonage-protocol.js";

export interface ConfiguredCarrier {
  carrier: CarrierProtocol;
  /** The carrier's own public URL setting, when it has one (server.publicUrl otherwise). */
  publicUrl: string | undefined;
}

const CARRIERS: ReadonlyArray<(config: TelephonyConfig) => ConfiguredCarrier> = [
  (config) => ({ carrier: twilioProtocol(config.twilio), publicUrl: config.twilio.publicUrl }),
  (config) => ({ carrier: telnyxProtocol(config.telnyx), publicUrl: config.telnyx.publicUrl }),
  (config) => ({ carrier: plivoProtocol(config.plivo), publicUrl: config.plivo.publicUrl }),
  (config) => ({ carrier: vonageProtocol(config.vonage), publicUrl: config.vonage.publicUrl }),
];

/** Every carrier of this build, configured or not (an unconfigured one serves local demo mode or 503s). */
export function configuredCarriers(config: TelephonyConfig): ConfiguredCarrier[] {
  return CARRIERS.map((entry) => entry(config));
}

/**
 * The carrier outbound calls use when they name none: telephony.defaultCarrier,
 * else the first with REST credentials, else the first.
 */
export function defaultCarrierId(config: TelephonyConfig, carriers: readonly ConfiguredCarrier[]): string {
  const named = config.defaultCarrier;
  if (named !== undefined) {
    if (!carriers.some((c) => c.carrier.id === named))
      throw new TalkError(
        "config_invalid",
        `telephony.defaultCarrier: ${named} is not a carrier (${carriers.map((c) => c.carrier.id).join(", ")}).`,
      );
    return named;
  }
  return (carriers.find((c) => c.carrier.rest) ?? carriers[0]!).carrier.id;
}
