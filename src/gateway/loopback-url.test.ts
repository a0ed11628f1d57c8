import { describe, expect, it } from "vitest";
import { loopbackBaseUrl } from "./loopback-url.js";

const server = (...addresses: Array<{ address: string; family: string; port: number } | string>) => ({
  addresses: () => addresses,
});

describe("loopbackBaseUrl", () => {
  it("reaches a wildcard bind on the loopback address, IPv4 and IPv6", () => {
    expect(loopbackBaseUrl(server({ address: "0.0.0.0", family: "IPv4", port: 8787 }))).toBe(
      "http://127.0.0.1:8787",
    );
    expect(loopbackBaseUrl(server({ address: "::", family: "IPv6", port: 8787 }))).toBe("http://[::1]:8787");
  });

  it("keeps a specific address, bracketing IPv6", () => {
    expect(loopbackBaseUrl(server({ address: "127.0.0.2", family: "IPv4", port: 9 }))).toBe(
      "http://127.0.0.2:9",
    );
    expect(loopbackBaseUrl(server({ address: "fe80::1", family: "IPv6", port: 9 }))).toBe(
      "http://[fe80::1]:9",
    );
  });

  it("is undefined before listen, and skips pipe paths and port 0", () => {
    expect(loopbackBaseUrl(server())).toBeUndefined();
    expect(
      loopbackBaseUrl(server("/tmp/talkgate.sock", { address: "0.0.0.0", family: "IPv4", port: 0 })),
    ).toBe(undefined);
  });
});
