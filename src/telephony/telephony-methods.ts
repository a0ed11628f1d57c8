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
 * - `telephony.call.get {id}` (admin): where the call is, like
 *   `GET /telephony/calls/:id`, by job id (from any worker) or carrier call id:
 *   `{state, jobId?, callSid?, sessionId?, reason?, error?}`;
 *   `session_not_found` for an unknown id.
 */
import { z } from "zod";
import { TalkError } from "../core/index.js";
import type { SurfaceContext } from "../gateway/index.js";
import { CallRequestSchema, OUTBOUND_CALL_ID } from "./outbound/call-request.js";
import type { OutboundCalls } from "./outbound/outbound-calls.js";

export const TELEPHONY_CALL_METHOD = "telephony.call";
export const TELEPHONY_CALL_GET_METHOD = "telephony.call.get";

const CallGetSchema = z
  .object({ id: z.string().regex(OUTBOUND_CALL_ID, "a job id (call-...) or a carrier call id") })
  .strict();

export function registerTelephonyMethods(
  registerMethod: SurfaceContext["registerMethod"],
  outbound: Pick<OutboundCalls, "place" | "status">,
): void {
  registerMethod(TELEPHONY_CALL_METHOD, {
    scope: "admin",
    params: CallRequestSchema,
    handler: (params) => outbound.place(params, undefined),
  });
  registerMethod(TELEPHONY_CALL_GET_METHOD, {
    scope: "admin",
    params: CallGetSchema,
    handler: async ({ id }) => {
      const status = await outbound.status(id);
      if (!status)
        throw new TalkError("session_not_found", `No outbound call ${id} is known to this deployment.`, {
          details: { id },
        });
      return status;
    },
  });
}
