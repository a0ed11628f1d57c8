import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { SseParser, type SseEvent } from "./sse-parser.js";

function parseInPieces(bytes: Uint8Array, cuts: number[]): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  let last = 0;
  for (const cut of [...cuts, bytes.length]) {
    events.push(...parser.push(bytes.subarray(last, cut)));
    last = cut;
  }
  return [...events, ...parser.end()];
}

const STREAM =
  ": keep-alive comment\r\n" +
  'data: {"choices":[{"delta":{"content":"Grüße 😀"}}]}\r\n\r\n' +
  "event: update\nid: 7\ndata: line one\ndata: line two\n\n" +
  "data:no-space\r\r" +
  "retry: 1000\nunknown: x\ndata\n\n" +
  "data: [DONE]\n\n";

const EXPECTED: SseEvent[] = [
  { event: "message", data: '{"choices":[{"delta":{"content":"Grüße 😀"}}]}' },
  { event: "update", data: "line one\nline two", id: "7" },
  { event: "message", data: "no-space", id: "7" },
  { event: "message", data: "", id: "7" },
  { event: "message", data: "[DONE]", id: "7" },
];

describe("SseParser", () => {
  it("parses events, comments, multi-line data and all three line endings", () => {
    expect(parseInPieces(new TextEncoder().encode(STREAM), [])).toEqual(EXPECTED);
  });

  it("gives the same events for every single split point, including inside CRLF and UTF-8 sequences", () => {
    const bytes = new TextEncoder().encode(STREAM);
    for (let cut = 1; cut < bytes.length; cut++) expect(parseInPieces(bytes, [cut])).toEqual(EXPECTED);
  });

  it("gives the same events one byte at a time", () => {
    const bytes = new TextEncoder().encode(STREAM);
    expect(
      parseInPieces(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
    ).toEqual(EXPECTED);
  });

  it("dispatches an event left unterminated at the end of the stream", () => {
    const parser = new SseParser();
    expect(parser.push("data: [DONE]")).toEqual([]);
    expect(parser.end()).toEqual([{ event: "message", data: "[DONE]" }]);
  });

  it("rejects an event longer than maxEventChars with provider_error", () => {
    const parser = new SseParser({ maxEventChars: 32 });
    expect(() => parser.push(`data: ${"x".repeat(40)}`)).toThrow(TalkError);
    const lines = new SseParser({ maxEventChars: 32 });
    expect(() => lines.push(`data: ${"y".repeat(20)}\ndata: ${"y".repeat(20)}\n`)).toThrowError(
      /longer than 32/,
    );
  });
});
