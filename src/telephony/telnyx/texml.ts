/**
 * TeXML that connects a call to our bidirectional media stream:
 * `<Connect><Stream url bidirectionalMode="rtp" bidirectionalCodec="PCMU">`
 * with the stream's parameters as `<Parameter>`s, which Telnyx hands back in
 * the stream's `start.custom_parameters`. `<Connect>` holds the call on the
 * stream until it ends (a `<Start>` stream would run beside the next verbs);
 * `rtp` mode is what makes Telnyx play the raw PCMU we send (without it
 * Telnyx expects MP3 files and drops our audio). `codec="PCMU"` asks for the
 * caller's audio in PCMU too: the attribute's default is the call's own
 * codec, and Telnyx transcodes between PCMU and PCMA only, so an A-law call
 * streams as PCMU (a G722, OPUS or AMR-WB call still streams its own codec,
 * which the stream route refuses, 1008, naming it). Source: the TeXML
 * `<Stream>` reference (developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/stream).
 */
import type { StreamTarget } from "../carrier/carrier-protocol.js";

const XML_ESCAPES: Readonly<Record<string, string>> = Object.freeze({
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
});

/** An attribute value, escaped; characters XML 1.0 cannot carry are dropped. */
function attr(value: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "");
  return clean.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}

/** TeXML connecting the call to `stream.url`, with its parameters. */
export function connectStreamTexml(stream: StreamTarget): string {
  const parameters = Object.entries(stream.parameters)
    .map(([name, value]) => `<Parameter name="${attr(name)}" value="${attr(value)}"/>`)
    .join("");
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    "<Response><Connect>" +
    `<Stream url="${attr(stream.url)}" codec="PCMU" bidirectionalMode="rtp" bidirectionalCodec="PCMU">` +
    parameters +
    "</Stream></Connect></Response>"
  );
}
