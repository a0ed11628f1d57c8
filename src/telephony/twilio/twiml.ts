/**
 * TwiML that connects a call to our bidirectional Media Stream:
 * `<Connect><Stream url>` with the stream's parameters as `<Parameter>`s,
 * which Twilio hands back in the stream's `start.customParameters`.
 */
// Deep import for the same reason as the webhooks module (see twilio-signature.ts):
// the TwiML builder alone costs ~30 ms to load, the package root ~140 ms.
import VoiceResponse from "twilio/lib/twiml/VoiceResponse.js";
import type { StreamTarget } from "../carrier/carrier-protocol.js";

/** Twilio's names for the neutral stream parameters (the TwiML reads as Twilio's own vocabulary). */
const TWIML_PARAMETER_NAMES: Readonly<Record<string, string>> = Object.freeze({
  callId: "callSid",
  accountId: "accountSid",
});

/** TwiML connecting the call to `stream.url`, with its parameters. */
export function connectStreamTwiml(stream: StreamTarget): string {
  const response = new VoiceResponse();
  const element = response.connect().stream({ url: stream.url });
  for (const [name, value] of Object.entries(stream.parameters)) {
    element.parameter({ name: TWIML_PARAMETER_NAMES[name] ?? name, value });
  }
  return response.toString();
}

/**
 * TwiML that moves a live call to `destination` (the stream ends; Twilio
 * dials). With `briefingUrl`, the person who answers first hears the TwiML
 * at that URL (Twilio's `<Number url>` whisper), then is connected.
 */
export function dialTwiml(destination: string, briefingUrl?: string): string {
  const response = new VoiceResponse();
  const dial = response.dial();
  if (destination.startsWith("sip:")) dial.sip(destination);
  else dial.number(briefingUrl ? { url: briefingUrl } : {}, destination);
  return response.toString();
}

/** TwiML the callee of a transfer hears before being connected: the briefing, spoken by Twilio. */
export function briefingTwiml(text: string): string {
  const response = new VoiceResponse();
  response.say(text);
  return response.toString();
}
