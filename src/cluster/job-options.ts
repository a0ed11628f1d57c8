import { TalkError } from "../core/index.js";

const KIND = /^[a-z0-9][a-z0-9-]{0,63}$/;

/**
 * The checks both job queues (BullMQ and in-process) make on their options,
 * with the same `config_invalid` messages.
 */

/** The deployment's job kinds, without repeats: non-empty, each of lowercase letters, digits and dashes. */
export function checkJobKinds(kinds: readonly string[]): string[] {
  const unique = [...new Set(kinds)];
  if (unique.length === 0 || unique.some((k) => !KIND.test(k))) {
    throw new TalkError(
      "config_invalid",
      "jobs: kinds must be non-empty names of lowercase letters, digits and dashes.",
    );
  }
  return unique;
}

/** An integer option of at least `min`. */
export function checkJobInt(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min)
    throw new TalkError("config_invalid", `jobs: ${name} must be an integer >= ${min}.`);
  return value;
}
