/**
 * The Plivo XML of a transfer (Plivo's Transfer API moves a live call to the
 * XML its `aleg_url` serves):
 * - the call runs `<Dial confirmSound="..."><Number>...</Number></Dial>` (a
 *   SIP URI as `<User>`): Plivo fetches `confirmSound` with a POST when the
 *   destination answers and plays what that XML says to the called party
 *   only (Play, Speak and Wait; everything else is ignored), then connects
 *   the caller. No `confirmKey`: the callee is not asked to press a key;
 * - the briefing (`confirmSound`'s document): `<Speak>` with the text.
 */
import { escapeXml } from "./plivo-xml.js";

/** `<Response><Dial [confirmSound]><Number|User>destination</...></Dial></Response>`. */
export function transferXml(destination: string, briefingUrl: string | undefined): string {
  const sip = /^sips?:/i.test(destination);
  const target = sip
    ? `<User>${escapeXml(destination)}</User>`
    : `<Number>${escapeXml(destination.replace(/^\+/, ""))}</Number>`;
  const confirm = briefingUrl ? ` confirmSound="${escapeXml(briefingUrl)}"` : "";
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Dial${confirm}>${target}</Dial></Response>`;
}

/** The briefing the callee hears: `<Response><Speak>text</Speak></Response>`. */
export function briefingXml(text: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Speak>${escapeXml(text)}</Speak></Response>`;
}
