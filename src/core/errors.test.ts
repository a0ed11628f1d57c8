import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TALK_ERROR_CODES, TalkError, toTalkError } from "./errors.js";

const docPath = fileURLToPath(new URL("../../docs/errors.md", import.meta.url));

/** Rows of the docs table: | `code` | retryable | HTTP | meaning |. */
function documentedRows(): Map<string, { retryable: boolean; httpStatus: number }> {
  const rows = new Map<string, { retryable: boolean; httpStatus: number }>();
  for (const line of readFileSync(docPath, "utf8").split("\n")) {
    const match = /^\|\s*`([a-z_]+)`\s*\|\s*(true|false)\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (match?.[1]) rows.set(match[1], { retryable: match[2] === "true", httpStatus: Number(match[3]) });
  }
  return rows;
}

function documentedCodes(): Map<string, boolean> {
  return new Map([...documentedRows()].map(([code, row]) => [code, row.retryable]));
}

describe("error catalogue", () => {
  it("docs/errors.md lists exactly the codes of TALK_ERROR_CODES with the same retryable flag", () => {
    const documented = documentedCodes();
    const catalogue = new Map(Object.entries(TALK_ERROR_CODES).map(([code, info]) => [code, info.retryable]));
    expect([...documented.keys()].sort()).toEqual([...catalogue.keys()].sort());
    for (const [code, retryable] of catalogue) expect(documented.get(code), code).toBe(retryable);
  });

  it("every code has an HTTP status in 400..599, and docs/errors.md lists the same status", () => {
    const documented = documentedRows();
    for (const [code, info] of Object.entries(TALK_ERROR_CODES)) {
      expect(Number.isInteger(info.httpStatus), code).toBe(true);
      expect(info.httpStatus, code).toBeGreaterThanOrEqual(400);
      expect(info.httpStatus, code).toBeLessThan(600);
      expect(documented.get(code)?.httpStatus, code).toBe(info.httpStatus);
    }
  });

  it("a TalkError carries its code's HTTP status", () => {
    expect(new TalkError("session_not_found").httpStatus).toBe(404);
    expect(new TalkError("unauthorized", "no").httpStatus).toBe(401);
    expect(toTalkError(new Error("boom")).httpStatus).toBe(500);
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
