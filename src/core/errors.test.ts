import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TALK_ERROR_CODES, TalkError, toTalkError } from "./errors.js";

const docPath = fileURLToPath(new URL("../../docs/errors.md", import.meta.url));

/** Rows of the docs table: | `code` | retryable | meaning |. */
function documentedCodes(): Map<string, boolean> {
  const rows = new Map<string, boolean>();
  for (const line of readFileSync(docPath, "utf8").split("\n")) {
    const match = /^\|\s*`([a-z_]+)`\s*\|\s*(true|false)\s*\|/.exec(line);
    if (match?.[1]) rows.set(match[1], match[2] === "true");
  }
  return rows;
}

describe("error catalogue", () => {
  it("docs/errors.md lists exactly the codes of TALK_ERROR_CODES with the same retryable flag", () => {
    const documented = documentedCodes();
    const catalogue = new Map(Object.entries(TALK_ERROR_CODES).map(([code, info]) => [code, info.retryable]));
    expect([...documented.keys()].sort()).toEqual([...catalogue.keys()].sort());
    for (const [code, retryable] of catalogue) expect(documented.get(code), code).toBe(retryable);
  });

  it("serializes to the wire shape and keeps the cause", () => {
    const cause = new Error("root");
    const err = new TalkError("stale_turn", undefined, { cause, details: { turnId: "t1" } });
    expect(err.toJSON()).toEqual({
      code: "stale_turn",
      message: TALK_ERROR_CODES.stale_turn.message,
      retryable: false,
      details: { turnId: "t1" },
    });
    expect(err.cause).toBe(cause);
  });

  it("maps an AbortError to cancelled and anything else to the fallback", () => {
    const abort = new DOMException("aborted", "AbortError");
    expect(toTalkError(abort).code).toBe("cancelled");
    expect(toTalkError(new Error("x"), "provider_error").code).toBe("provider_error");
  });
});
