/**
 * A call's answering-machine detection settings: the request's
 * `machineDetection` over `telephony.amd.numbers[from]` over `telephony.amd`.
 * No policy anywhere: no detection is requested.
 */
import { z } from "zod";
import { AMD_GREET, AMD_POLICIES, type AmdConfig } from "../../config/index.js";
import { TalkError } from "../../core/index.js";
import type { AmdSettings } from "./amd-types.js";

/** The `machineDetection` field of an outbound call request (POST /telephony/calls, telephony.call). */
export const MachineDetectionRequestSchema = z
  .object({
    policy: z.enum(AMD_POLICIES),
    /** Left on a voicemail (policy voicemail); default telephony.amd's. */
    message: z.string().trim().min(1).max(1000).optional(),
    greet: z.enum(AMD_GREET).optional(),
  })
  .strict();

export type MachineDetectionField = z.infer<typeof MachineDetectionRequestSchema>;

/** Throws invalid_params naming `machineDetection.message` when the voicemail policy has no message. */
export function resolveAmd(
  requested: MachineDetectionField | undefined,
  from: string,
  config: AmdConfig,
): AmdSettings | undefined {
  const number = config.numbers[from];
  const policy = requested?.policy ?? number?.policy ?? config.policy;
  if (policy === undefined) return undefined;
  const message = requested?.message ?? number?.message ?? config.message;
  if (policy === "voicemail" && message === undefined)
    throw new TalkError(
      "invalid_params",
      "machineDetection.message: the voicemail policy needs a message (none given, and telephony.amd sets none).",
      {
        details: {
          issues: [{ path: "machineDetection.message", message: "required by the voicemail policy" }],
        },
      },
    );
  return {
    policy,
    message,
    greet: requested?.greet ?? number?.greet ?? config.greet,
    timeoutMs: config.timeoutMs,
  };
}
