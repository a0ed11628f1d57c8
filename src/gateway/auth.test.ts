import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { describe, expect, it } from "vitest";
import { isLoopbackPeer, TokenAuthorizer } from "./auth.js";
import type { AuthorizedRequest } from "./request-authorizer.js";

const READ = "read-token-0000000000000001";
const WRITE = "write-token-000000000000002";
const ADMIN = "admin-token-000000000000003";
const TOOLS = "tools-token-000000000000004";
const TOKENS = [
  { name: "reader", token: READ, scopes: ["read"] as const },
  { name: "writer", token: WRITE, scopes: ["write"] as const },
  { name: "admin", token: ADMIN, scopes: ["admin"] as const },
  { name: "surface", token: TOOLS, scopes: ["direct-tools"] as const },
];

const request = (headers: IncomingHttpHeaders = {}, ...peer: [string?]): AuthorizedRequest => ({
  headers,
  remoteAddress: peer.length === 0 ? "127.0.0.1" : peer[0],
});
const bearer = (token: string): AuthorizedRequest => request({ authorization: `Bearer ${token}` });

describe("TokenAuthorizer: one rule for the Talk API and every surface", () => {
  it("compares the presented token with every configured token, whichever matches or none", () => {
    let calls = 0;
    const authorizer = new TokenAuthorizer({
      tokens: TOKENS,
      compare: (a, b) => {
        calls += 1;
        expect(a.length).toBe(32); // SHA-256 digests, never the raw tokens
        expect(b.length).toBe(32);
        return timingSafeEqual(a, b);
      },
    });
    for (const token of [READ, WRITE, ADMIN, "not-a-configured-token-0000"]) {
      calls = 0;
      authorizer.check(bearer(token), "read");
      expect(calls, token).toBe(TOKENS.length);
    }
  });

  it("admin implies direct-tools implies write implies read", () => {
    const authorizer = new TokenAuthorizer({ tokens: TOKENS });
    const decide = (token: string) =>
      (["read", "write", "direct-tools", "admin"] as const).map((scope) =>
        authorizer.check(bearer(token), scope),
      );
    expect(decide(READ)).toEqual(["ok", "forbidden", "forbidden", "forbidden"]);
    expect(decide(WRITE)).toEqual(["ok", "ok", "forbidden", "forbidden"]);
    expect(decide(TOOLS)).toEqual(["ok", "ok", "ok", "forbidden"]);
    expect(decide(ADMIN)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(authorizer.authenticate(bearer(WRITE))).toMatchObject({ name: "writer" });
  });

  it("with tokens configured, a missing, unknown or malformed Authorization header is unauthorized", () => {
    const authorizer = new TokenAuthorizer({ tokens: TOKENS });
    for (const authorization of [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      `Basic ${ADMIN}`,
      `Bearer ${ADMIN} extra`,
      `Bearer${ADMIN}`,
      `Token ${ADMIN}`,
      `Bearer ${ADMIN.slice(0, -1)}`,
      `Bearer ${ADMIN}x`,
    ]) {
      const headers = authorization === undefined ? {} : { authorization };
      expect(authorizer.check(request(headers), "read"), String(authorization)).toBe("unauthorized");
    }
    // A malformed header is not rescued by a subprotocol token.
    expect(
      authorizer.check(
        request({ authorization: "Basic x", "sec-websocket-protocol": `talkgate, bearer.${ADMIN}` }),
        "read",
      ),
    ).toBe("unauthorized");
    // The scheme is case-insensitive, trailing blanks are tolerated.
    expect(authorizer.check(request({ authorization: `bearer ${ADMIN}  ` }), "admin")).toBe("ok");
  });

  it("browsers' bearer.<token> subprotocol authenticates like the header", () => {
    const authorizer = new TokenAuthorizer({ tokens: TOKENS });
    const ws = request({ "sec-websocket-protocol": `talkgate, bearer.${WRITE}` });
    expect(authorizer.check(ws, "write")).toBe("ok");
    expect(authorizer.check(request({ "sec-websocket-protocol": "talkgate, bearer." }), "read")).toBe(
      "unauthorized",
    );
  });

  it("with tokens configured the peer's address does not matter: loopback needs a token too", () => {
    const authorizer = new TokenAuthorizer({ tokens: TOKENS });
    expect(authorizer.check(request({}, "127.0.0.1"), "read")).toBe("unauthorized");
    expect(authorizer.check(request({ authorization: `Bearer ${READ}` }, "203.0.113.9"), "read")).toBe("ok");
  });

  it("with no tokens, loopback peers are anonymous with read + write (never admin), others are unauthorized", () => {
    let calls = 0;
    const authorizer = new TokenAuthorizer({ tokens: [], compare: () => (calls++, false) });
    expect(authorizer.enabled).toBe(false);
    for (const peer of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      expect(authorizer.check(request({}, peer), "read"), peer).toBe("ok");
      expect(authorizer.check(request({}, peer), "write"), peer).toBe("ok");
      expect(authorizer.check(request({}, peer), "admin"), peer).toBe("forbidden");
    }
    // Any presented header is ignored: there is nothing to check it against.
    expect(authorizer.check(bearer("whatever-token"), "write")).toBe("ok");
    expect(authorizer.authenticate(request())).toMatchObject({ name: "anonymous" });
    for (const peer of ["10.0.0.2", "203.0.113.9", "::ffff:10.0.0.2", "fe80::1", undefined]) {
      expect(authorizer.check(request({}, peer), "read"), String(peer)).toBe("unauthorized");
    }
    expect(calls).toBe(0);
  });

  it("with no tokens the anonymous scopes are the configured ones", () => {
    const authorizer = new TokenAuthorizer({ tokens: [], anonymousScopes: ["read"] });
    expect(authorizer.check(request(), "read")).toBe("ok");
    expect(authorizer.check(request(), "write")).toBe("forbidden");
  });

  it("isLoopbackPeer knows 127/8, ::1 and their IPv4-mapped forms only", () => {
    expect(["127.0.0.1", "127.255.0.1", "::1", "::FFFF:127.0.0.1"].every(isLoopbackPeer)).toBe(true);
    expect(["128.0.0.1", "0.0.0.0", "::", "localhost", "", undefined].some(isLoopbackPeer)).toBe(false);
  });
});
