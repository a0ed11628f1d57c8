import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { GATEWAY_DEFAULTS, isLoopbackHost, resolveGatewayOptions } from "./gateway-options.js";

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TalkError);
    expect((err as TalkError).code).toBe("config_invalid");
    return (err as TalkError).details?.problems as string[];
  }
  throw new Error("expected config_invalid");
}

describe("gateway options", () => {
  it("defaults are frozen and used for every field left out", () => {
    expect(Object.isFrozen(GATEWAY_DEFAULTS)).toBe(true);
    const o = resolveGatewayOptions();
    expect(o).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      maxPayloadBytes: 1024 * 1024,
      reconnectGraceMs: 30_000,
    });
    expect(o.maxRejectedRequests).toBe(o.rateLimit.burst * 2);
  });

  it("nested objects merge over the defaults", () => {
    const o = resolveGatewayOptions({ rateLimit: { burst: 3 } });
    expect(o.rateLimit).toEqual({
      requestsPerSecond: GATEWAY_DEFAULTS.rateLimit.requestsPerSecond,
      burst: 3,
    });
  });

  it("a non-loopback host without tokens is refused, naming server.host", () => {
    expect(problemsOf(() => resolveGatewayOptions({ host: "0.0.0.0" }))).toEqual([
      expect.stringContaining("server.host"),
    ]);
  });

  it("bad numbers, scopes and duplicate tokens are all named at once", () => {
    const problems = problemsOf(() =>
      resolveGatewayOptions({
        port: 70_000,
        maxPayloadBytes: 10,
        auth: {
          tokens: [
            { name: "a", token: "same-token-value-123", scopes: ["read"] },
            { name: "b", token: "same-token-value-123", scopes: ["root" as "read"] },
          ],
        },
      }),
    );
    expect(problems.join("\n")).toMatch(/server\.port/);
    expect(problems.join("\n")).toMatch(/gateway\.maxPayloadBytes/);
    expect(problems.join("\n")).toMatch(/auth\.tokens\.1\.token: duplicate/);
    expect(problems.join("\n")).toMatch(/auth\.tokens\.1\.scopes/);
  });

  it("recognises loopback hosts", () => {
    expect(["127.0.0.1", "127.1.2.3", "::1", "localhost"].every(isLoopbackHost)).toBe(true);
    expect(["0.0.0.0", "10.0.0.1", "::", "example.com"].some(isLoopbackHost)).toBe(false);
  });
});
