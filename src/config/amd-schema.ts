import { z } from "zod";

/**
 * `telephony.amd`: answering-machine detection of outbound calls (the
 * carrier's AMD, requested on the dial) and what to do with its result.
 * Every default is documented in docs/telephony.md ("Answering-machine
 * detection").
 */

/** What a call does once the carrier says who answered: go on, hang up on a machine, or leave a voicemail. */
export const AMD_POLICIES = ["continue", "hangup", "voicemail"] as const;
export type AmdPolicy = (typeof AMD_POLICIES)[number];

/** When a call with detection speaks its greeting: once the callee is known to be a person, or at once. */
export const AMD_GREET = ["after_detection", "at_once"] as const;
export type AmdGreet = (typeof AMD_GREET)[number];

const message = z.string().trim().min(1).max(1000);

const amdNumber = z
  .object({
    policy: z.enum(AMD_POLICIES).optional(),
    /** Left on a voicemail (policy voicemail) after the beep. */
    message: message.optional(),
    greet: z.enum(AMD_GREET).optional(),
  })
  .strict();

export const amdSchema = z
  .object({
    /** Policy of outbound calls that name none (and whose caller id is not in `numbers`); unset: no detection requested. */
    policy: z.enum(AMD_POLICIES).optional(),
    /** The voicemail message of calls that name none. */
    message: message.optional(),
    /** after_detection: the callee hears the greeting once detection says human (or unknown); at_once: as it answers. */
    greet: z.enum(AMD_GREET).default("after_detection"),
    /** A result (or the end of a machine's greeting) not reported within this after answer counts as unknown, ms. */
    timeoutMs: z.number().int().min(100).max(120_000).default(30_000),
    /** Per caller id (E.164, the `from` of the outbound call): policy, message, greet. */
    numbers: z.record(z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 number"), amdNumber).default({}),
  })
  .strict()
  .superRefine((amd, ctx) => {
    if (amd.policy === "voicemail" && amd.message === undefined)
      ctx.addIssue({ code: "custom", path: ["message"], message: "the voicemail policy needs a message" });
    for (const [number, entry] of Object.entries(amd.numbers)) {
      const policy = entry.policy ?? amd.policy;
      if (policy === "voicemail" && (entry.message ?? amd.message) === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["numbers", number, "message"],
          message: "the voicemail policy needs a message (here or telephony.amd.message)",
        });
    }
  });

export type AmdConfig = z.infer<typeof amdSchema>;
