import { describe, expect, it } from "vitest";
import { InProcessOneTimeClaims, type OneTimeClaims } from "../cluster/index.js";
import { TalkError } from "../core/index.js";
import { StreamTokens, type StreamClaims } from "./stream-tokens.js";

const CALL: StreamClaims = {
  kind: "inbound",
  carrier: "twilio",
  callId: "CA1",
  accountId: "AC1",
  from: "+15550001111",
  to: "+15550002222",
  direction: "inbound",
  mode: "stt-tts",
};
const EXPECT = { carrier: "twilio", callId: "CA1" };

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe("stream tokens", () => {
  it("redeems once and carries the call's metadata; letters and digits only", async () => {
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    const token = await tokens.issue(CALL, 30_000);
    expect(token).toMatch(/^[A-Za-z0-9]+$/);
    const first = await tokens.redeem(token, EXPECT);
    expect(first).toMatchObject({ ok: true, claims: CALL });
    expect(await tokens.redeem(token, EXPECT)).toEqual({ ok: false, reason: "reused" });
  });

  it("another worker sharing the claims verifies and spends a token it did not issue", async () => {
    const shared = new InProcessOneTimeClaims();
    const issuer = new StreamTokens({ claims: shared });
    const other = new StreamTokens({ claims: shared });
    const token = await issuer.issue(CALL, 30_000);
    expect((await other.redeem(token, EXPECT)).ok).toBe(true);
    expect(await issuer.redeem(token, EXPECT)).toEqual({ ok: false, reason: "reused" });
  });

  it("a worker with another secret refuses the token as unknown", async () => {
    const token = await new StreamTokens({ claims: new InProcessOneTimeClaims() }).issue(CALL, 30_000);
    const stranger = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    expect(await stranger.redeem(token, EXPECT)).toEqual({ ok: false, reason: "unknown" });
  });

  it("refuses tampered claims, truncated or garbage tokens, and a missing one", async () => {
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    const token = await tokens.issue(CALL, 30_000);
    const body = Buffer.from(token.slice(2, -32), "hex").toString("utf8").replace("CA1", "CA2");
    const tampered = `t1${Buffer.from(body, "utf8").toString("hex")}${token.slice(-32)}`;
    expect(await tokens.redeem(tampered, { carrier: "twilio", callId: "CA2" })).toEqual({
      ok: false,
      reason: "unknown",
    });
    for (const bad of [token.slice(0, -1), "t1zz", "x".repeat(5000), 42, null, {}]) {
      expect(await tokens.redeem(bad, EXPECT)).toEqual({ ok: false, reason: "unknown" });
    }
    expect(await tokens.redeem(undefined, EXPECT)).toEqual({ ok: false, reason: "missing" });
    expect(await tokens.redeem("", EXPECT)).toEqual({ ok: false, reason: "missing" });
    // None of these spent the genuine token.
    expect((await tokens.redeem(token, EXPECT)).ok).toBe(true);
  });

  it("expires after its ttl", async () => {
    const c = clock();
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims({ now: c.now }), now: c.now });
    const late = await tokens.issue(CALL, 30_000);
    const onTime = await tokens.issue(CALL, 30_000);
    c.advance(29_999);
    expect((await tokens.redeem(onTime, EXPECT)).ok).toBe(true);
    c.advance(1);
    expect(await tokens.redeem(late, EXPECT)).toEqual({ ok: false, reason: "expired" });
  });

  it("an inbound token is for its call and its carrier only; an outbound one names our dial", async () => {
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    expect(
      await tokens.redeem(await tokens.issue(CALL, 30_000), { carrier: "twilio", callId: "CA-other" }),
    ).toEqual({
      ok: false,
      reason: "call_mismatch",
    });
    expect(
      await tokens.redeem(await tokens.issue(CALL, 30_000), { carrier: "telnyx", callId: "CA1" }),
    ).toEqual({
      ok: false,
      reason: "call_mismatch",
    });
    const dial = await tokens.issue({ kind: "outbound", carrier: "twilio", callId: "dial-1" }, 120_000);
    // The carrier's call id is not known when dialling: the dial id is checked by the dialer instead.
    expect(await tokens.redeem(dial, { carrier: "twilio", callId: "CA-whatever" })).toMatchObject({
      ok: true,
      claims: { kind: "outbound", callId: "dial-1" },
    });
  });

  it("fails closed when the single-use check cannot be made", async () => {
    const working = new InProcessOneTimeClaims();
    let down = false;
    const flaky: OneTimeClaims = {
      claim: async (key, ttl) => {
        if (down) throw new TalkError("owner_unreachable", "Redis is down");
        return working.claim(key, ttl);
      },
      sharedSecret: (name) => working.sharedSecret(name),
    };
    const tokens = new StreamTokens({ claims: flaky });
    const token = await tokens.issue(CALL, 30_000);
    down = true;
    expect(await tokens.redeem(token, EXPECT)).toEqual({ ok: false, reason: "unavailable" });
    down = false;
    expect((await tokens.redeem(token, EXPECT)).ok).toBe(true);
  });

  it("refuses to issue without a call id or with an absurd ttl", async () => {
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    await expect(tokens.issue({ ...CALL, callId: "" }, 30_000)).rejects.toMatchObject({
      code: "invalid_params",
    });
    await expect(tokens.issue(CALL, 10)).rejects.toMatchObject({ code: "invalid_params" });
  });
});
