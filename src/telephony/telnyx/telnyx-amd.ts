/**
 * Telnyx answering-machine detection for the TeXML calls talkgate places
 * (docs: "TeXML Answering Machine Detection Support", and the TeXML
 * "Initiate an outbound call" reference): the call create (JSON) takes
 * `MachineDetection` (`Enable`, or `DetectMessageEnd` for the end of a
 * machine's greeting), `AsyncAmd: true` (the TeXML, and so the stream, runs
 * at answer) and `AsyncAmdStatusCallback` / `...Method`; Telnyx posts the
 * result there as `AnsweredBy` (human, machine_start, machine_end_beep,
 * machine_end_silence, machine_end_other, fax, unknown) with `CallSid` = the
 * call_control_id, signed (telnyx-signature-ed25519) like its other
 * webhooks. Call Control's `answering_machine_detection` (`call.machine.*`
 * events) belongs to Call Control dials, which talkgate does not place.
 */
import type { MachineDetectionRequest } from "../amd/amd-types.js";
import { asyncAmdParams } from "../amd/answered-by.js";

export { parseAnsweredBy as parseTelnyxAmd } from "../amd/answered-by.js";

export function telnyxAmdParams(request: MachineDetectionRequest | undefined): Record<string, unknown> {
  if (!request) return {};
  return { ...asyncAmdParams(request), AsyncAmd: true };
}
