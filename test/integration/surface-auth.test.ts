/**
 * One authorizer, one rule, on every surface: the Talk API, the meetings
 * routes and telephony's call routes answer the same request the same way
 * (401 without a valid token, 403 for a token without the scope; with no
 * tokens configured, loopback callers are anonymous with read + write).
 */
import { afterEach, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import { isTalkError } from "../../src/core/errors.js";
import { startMeetingsHarness, type MeetingsHarness } from "./meetings-harness.js";

const ADMIN = "surface-admin-token-000001";
const READER = "surface-read-token-0000001";
const WRITER = "surface-write-token-000001";
const TOKENS = {
  auth: {
    tokens: [
      { name: "admin", token: ADMIN, scopes: ["admin"] },
      { name: "reader", token: READER, scopes: ["read"] },
      { name: "writer", token: WRITER, scopes: ["write"] },
    ],
  },
};

let h: MeetingsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
}, 30_000);

async function status(path: string, init: RequestInit & { token?: string } = {}): Promise<number> {
  const { token, ...rest } = init;
  const res = await fetch(`${h!.baseUrl}${path}`, {
    ...rest,
    headers: {
      "content-type": "application/json",
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
  });
  await res.arrayBuffer();
  return res.status;
}

const createBot = { method: "POST", body: JSON.stringify({}) };
const placeCall = { method: "POST", body: JSON.stringify({ to: "+15551234567" }) };

describe("one authorizer across the Talk API, meetings and telephony", () => {
  it("with tokens: no or a malformed token is 401 everywhere, a token without the scope 403, admin implies the rest", async () => {
    h = await startMeetingsHarness({}, TOKENS);
    for (const token of [undefined, "not-a-configured-token-00"]) {
      expect(await status("/meetings/bots/nope", { token }), String(token)).toBe(401);
      expect(await status("/meetings/bots", { ...createBot, token }), String(token)).toBe(401);
      expect(await status("/telephony/calls", { ...placeCall, token }), String(token)).toBe(401);
    }
    const malformed = await fetch(`${h.baseUrl}/meetings/bots/nope`, {
      headers: { authorization: `Basic ${ADMIN}` },
    });
    expect(malformed.status).toBe(401);
    expect(malformed.headers.get("www-authenticate")).toBe('Bearer realm="talkgate"');
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe("unauthorized");

    // read: may read a bot (404: none), may not create one nor place a call.
    expect(await status("/meetings/bots/nope", { token: READER })).toBe(404);
    expect(await status("/meetings/bots", { ...createBot, token: READER })).toBe(403);
    const leave = await fetch(`${h.baseUrl}/meetings/bots/nope`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${READER}` },
    });
    expect(leave.status).toBe(403);
    expect(await status("/telephony/calls", { ...placeCall, token: READER })).toBe(403);
    // write: past the scope check (400: the empty body), still no calls.
    expect(await status("/meetings/bots", { ...createBot, token: WRITER })).toBe(400);
    expect(await status("/telephony/calls", { ...placeCall, token: WRITER })).toBe(403);
    // admin: every scope.
    expect(await status("/meetings/bots", { ...createBot, token: ADMIN })).toBe(400);
    expect(await status("/meetings/bots/nope", { token: ADMIN })).toBe(404);

    // The Talk API gives the same answers for the same tokens.
    const reader = await TalkClient.connect(`${h.baseUrl.replace(/^http/, "ws")}/talk`, { token: READER });
    const denied = await reader.requestUntyped("voicewake.set", { triggers: ["x"] }).catch((e: unknown) => e);
    expect(isTalkError(denied) && denied.code).toBe("forbidden");
    reader.close();
  }, 30_000);

  it("without tokens: loopback callers are anonymous with read + write on every surface, never admin", async () => {
    h = await startMeetingsHarness();
    expect(await status("/meetings/bots/nope")).toBe(404);
    expect(await status("/meetings/bots", createBot)).toBe(400);
    // A presented token changes nothing when none is configured.
    expect(await status("/meetings/bots/nope", { token: "anything-at-all-000000" })).toBe(404);
    // Placing a call is admin: refused for anonymous callers, as telephony.call on the Talk API is.
    expect(await status("/telephony/calls", placeCall)).toBe(403);
    const anonymous = await TalkClient.connect(`${h.baseUrl.replace(/^http/, "ws")}/talk`);
    const denied = await anonymous
      .requestUntyped("voicewake.set", { triggers: ["x"] })
      .catch((e: unknown) => e);
    expect(isTalkError(denied) && denied.code).toBe("forbidden");
    anonymous.close();
  }, 30_000);
});
