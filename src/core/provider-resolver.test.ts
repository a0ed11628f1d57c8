import { describe, expect, it } from "vitest";
import { ProviderRegistry } from "./provider-registry.js";
import { ProviderResolver } from "./provider-resolver.js";
import { realtimeFixture, sttFixture, ttsFixture } from "./testing/provider-fixtures.js";

describe("ProviderResolver", () => {
  const registry = new ProviderRegistry()
    .register(ttsFixture("one", { voices: ["alto"] }))
    .register(ttsFixture("two"))
    .register(sttFixture("only"))
    .register(realtimeFixture("rt", { clientSessions: true, transports: ["webrtc"] }));

  it("resolves the named id, else the configured default, else the sole provider of the kind", () => {
    const resolver = new ProviderResolver({ registry, defaults: { tts: "two" } });
    expect(resolver.resolve("tts", "one").id).toBe("one");
    expect(resolver.resolve("tts").id).toBe("two");
    expect(resolver.resolve("stt").id).toBe("only");
    expect(resolver.defaultId("stt")).toBe("only");
  });

  it("refuses to guess between several providers without a default", () => {
    const resolver = new ProviderResolver({ registry });
    expect(() => resolver.resolve("tts")).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });

  it("throws provider_not_found for an unknown id or an empty kind", () => {
    const resolver = new ProviderResolver({ registry });
    expect(() => resolver.resolve("tts", "three")).toThrow(
      expect.objectContaining({ code: "provider_not_found" }),
    );
    expect(() => resolver.resolve("agent")).toThrow(expect.objectContaining({ code: "provider_not_found" }));
  });

  it("throws capability_unsupported when the provider does not declare what is required", () => {
    const resolver = new ProviderResolver({ registry });
    expect(resolver.resolve("realtime", undefined, { clientSessions: true, transport: "webrtc" }).id).toBe(
      "rt",
    );
    expect(() => resolver.resolve("realtime", undefined, { gatewayRelay: true })).toThrow(
      expect.objectContaining({ code: "capability_unsupported" }),
    );
    expect(() => resolver.resolve("tts", "one", { voice: "bass" })).toThrow(/voice bass/);
  });

  it("validateDefaults fails on a default that is not registered", () => {
    expect(() => new ProviderResolver({ registry, defaults: { tts: "typo" } }).validateDefaults()).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
