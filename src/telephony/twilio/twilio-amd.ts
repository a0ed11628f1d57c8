/**
 * Twilio's answering-machine detection (docs: "Answering Machine
 * Detection"): the call create asks for `MachineDetection`
 * (`Enable`, or `DetectMessageEnd` to hear of the end of a machine's
 * greeting) with `AsyncAmd=true`, so the media stream starts at answer, and
 * Twilio posts `AnsweredBy` to `AsyncAmdStatusCallback`, signed with
 * X-Twilio-Signature like every other webhook.
 */
export { asyncAmdParams as twilioAmdParams, parseAnsweredBy as parseTwilioAmd } from "../amd/answered-by.js";
