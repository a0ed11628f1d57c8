import { expect } from "vitest";
import { validateConfig } from "../../src/config/load-config.js";

/**
 * Asserts that `talk.input` set to `input` is refused at start the way every bad setting is:
 * `config_invalid`, with the offending key in the message.
 */
export function expectTalkInputRefused(input: unknown, key: string): void {
  let error: unknown;
  try {
    validateConfig({ talk: { input } });
  } catch (err) {
    error = err;
  }
  expect(error).toMatchObject({ code: "config_invalid" });
  expect(String((error as Error).message)).toContain(key);
}
