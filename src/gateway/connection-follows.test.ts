import { describe, expect, it } from "vitest";
import { TalkError } from "../core/index.js";
import { ConnectionFollows } from "./connection-follows.js";

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof TalkError ? err.code : "other";
  }
};

describe("ConnectionFollows", () => {
  it("limits follows per connection, replaces a follow of the same key, stops one, and ends all when the connection closes", () => {
    const follows = new ConnectionFollows(2, "things");
    const a = new AbortController();
    const b = new AbortController();
    const first = follows.begin(a, "x");
    follows.begin(a, "y");
    expect(codeOf(() => follows.check(a, "z"))).toBe("session_limit");
    expect(codeOf(() => follows.begin(a, "z"))).toBe("session_limit");
    // Another connection has its own count; a key already followed is a replacement, not a new one.
    expect(codeOf(() => follows.begin(b, "z"))).toBeUndefined();
    const again = follows.begin(a, "x");
    expect(first.signal.aborted).toBe(true);
    expect(again.signal.aborted).toBe(false);
    expect(follows.stop(a, "x")).toBe(true);
    expect(again.signal.aborted).toBe(true);
    expect(follows.stop(a, "x")).toBe(false);
    // A follow that ended by itself frees its place.
    const y2 = follows.begin(a, "w");
    follows.begin(a, "y").done();
    expect(codeOf(() => follows.begin(a, "v"))).toBeUndefined();
    a.abort();
    expect(y2.signal.aborted).toBe(true);
  });
});
