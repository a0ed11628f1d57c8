/**
 * The telephony surface's methods on the Talk WebSocket API, added through
 * the Gateway's surface-method hook (`registerMethod`); not `talk.*` names,
 * which belong to the public Talk API.
 *
 * - `telephony.call {to, from?, mode?, greeting?}` (admin): places an
 *   outbound call, like `POST /telephony/calls`. Answers
 *   `{placed: true, callSid, sessionId, status}` when placed by this worker,
 *   `{placed: false, jobId, status: "queued"}` when queued as an
 *   `outbound-call` job.
 */
import type { GatewayServer } from "../gateway/index.js";
import { CallRequestSchema, type OutboundCalls } from "./outbound-calls.js";

export const TELEPHONY_CALL_METHOD = "telephony.call";

export function registerTelephonyMethods(
  registerMethod: GatewayServer["registerMethod"],
  outbound: Pick<OutboundCalls, "place">,
): void {
  registerMethod(TELEPHONY_CALL_METHOD, {
    scope: "admin",
    params: CallRequestSchema,
    handler: (params) => outbound.place(params, undefined),
  });
}
