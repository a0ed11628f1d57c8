import { describe, expect, it } from "vitest";
import { tokenAuthorizer } from "./admin-auth.js";

const bearer = (token: string) => ({
  headers: { authorization: `Bearer ${token}` },
  remoteAddress: "10.0.0.1",
});

describe("telephony's token authorizer", () => {
  const authorizer = tokenAuthorizer([
    { token: "admin-token", scopes: ["admin"] },
    { token: "write-token", scopes: ["write"] },
  ]);

  it("admin implies write implies read; a lower scope is forbidden, an unknown token unauthorized", () => {
    expect(authorizer.check(bearer("admin-token"), "admin")).toBe("ok");
    expect(authorizer.check(bearer("admin-token"), "read")).toBe("ok");
    expect(authorizer.check(bearer("write-token"), "write")).toBe("ok");
    expect(authorizer.check(bearer("write-token"), "admin")).toBe("forbidden");
    expect(authorizer.check(bearer("other"), "read")).toBe("unauthorized");
    expect(authorizer.check({ headers: {}, remoteAddress: "127.0.0.1" }, "read")).toBe("unauthorized");
  });

  it("with no tokens configured, admits loopback peers only", () => {
    const open = tokenAuthorizer([]);
    expect(open.check({ headers: {}, remoteAddress: "127.0.0.1" }, "admin")).toBe("ok");
    expect(open.check({ headers: {}, remoteAddress: "10.0.0.1" }, "admin")).toBe("unauthorized");
  });
});
