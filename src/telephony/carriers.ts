/**
 * The carriers this server speaks, by config section: the one place that
 * names them. Each entry turns its `telephony.<id>` settings into a
 * CarrierProtocol and the base URL that carrier reaches us on. Adding a
 * carrier is a folder implementing CarrierProtocol and one entry here.
 */
import type { TelephonyConfig } from "../config/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";
import { twilioProtocol } from "./twilio/twilio-protocol.js";

export interface ConfiguredCarrier {
  carrier: CarrierProtocol;
  /** The carrier's own public URL setting, when it has one (server.publicUrl otherwise). */
  publicUrl: string | undefined;
}

/** The carrier of this deployment (today the only one: `telephony.twilio`). */
export function configuredCarrier(config: TelephonyConfig): ConfiguredCarrier {
  const twilio = config.twilio;
  return { carrier: twilioProtocol(twilio), publicUrl: twilio.publicUrl };
}
