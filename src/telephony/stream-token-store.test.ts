import { describe, expect, it } from "vitest";
import { StreamTokenStore } from "./stream-token-store.js";

const CALL = { callId: "CA1", accountId: "AC1", from: "+15550001111", to: "+15550002222" };

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe("StreamTokenStore", () => {
  it("redeems a token once and returns the call it was issued for", () => {
    const store = new StreamTokenStore();
    const token = store.issue(CALL);
    expect(store.consume(token)).toEqual({ ok: true, call: CALL });
    expect(store.consume(token)).toEqual({ ok: false, reason: "unknown" });
  });

  it("issues distinct unguessable tokens", () => {
    const store = new StreamTokenStore();
    const tokens = new Set(Array.from({ length: 100 }, () => store.issue(CALL)));
    expect(tokens.size).toBe(100);
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("rejects a token presented after its TTL, and accepts it just before", () => {
    const c = clock();
    const store = new StreamTokenStore({ ttlMs: 30_000, now: c.now });
    const late = store.issue(CALL);
    const onTime = store.issue(CALL);
    c.advance(29_999);
    expect(store.consume(onTime).ok).toBe(true);
    c.advance(1);
    expect(store.consume(late)).toEqual({ ok: false, reason: "expired" });
  });

  it("burns a token presented for another call", () => {
    const store = new StreamTokenStore();
    const token = store.issue(CALL);
    expect(store.consume(token, "CA-other")).toEqual({ ok: false, reason: "call_mismatch" });
    expect(store.consume(token, "CA1")).toEqual({ ok: false, reason: "unknown" });
  });

  it("rejects non-string, malformed and unknown tokens", () => {
    const store = new StreamTokenStore();
    store.issue(CALL);
    expect(store.consume(undefined).ok).toBe(false);
    expect(store.consume(42).ok).toBe(false);
    expect(store.consume("short").ok).toBe(false);
    expect(store.consume("A".repeat(43))).toEqual({ ok: false, reason: "unknown" });
  });

  it("stays within maxTokens, dropping expired tokens first and then the oldest", () => {
    const c = clock();
    const store = new StreamTokenStore({ maxTokens: 3, ttlMs: 1000, now: c.now });
    const expired = store.issue(CALL);
    c.advance(1000);
    const a = store.issue(CALL);
    const b = store.issue(CALL);
    const d = store.issue(CALL); // full: the expired one goes
    expect(store.size).toBe(3);
    expect(store.consume(expired).ok).toBe(false);
    const e = store.issue(CALL); // full again (3 live): the oldest live one goes
    expect(store.size).toBe(3);
    expect(store.consume(a)).toEqual({ ok: false, reason: "unknown" });
    expect([b, d, e].map((t) => store.consume(t).ok)).toEqual([true, true, true]);
  });

  it("validates its options at construction", () => {
    expect(() => new StreamTokenStore({ ttlMs: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => new StreamTokenStore({ maxTokens: 1.5 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => new StreamTokenStore().issue({ callId: "" })).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
  });

  it("forgets every token on clear()", () => {
    const store = new StreamTokenStore();
    const token = store.issue(CALL);
    store.clear();
    expect(store.consume(token).ok).toBe(false);
  });
});
