import { describe, expect, it } from "vitest";
import { ProviderRegistry } from "./provider-registry.js";
import type { TalkProvider } from "./provider-types.js";
import { agentFixture, realtimeFixture, sttFixture, ttsFixture } from "./testing/provider-fixtures.js";

describe("ProviderRegistry", () => {
  it("rejects a duplicate kind/id with config_invalid but allows the same id under another kind", () => {
    const registry = new ProviderRegistry();
    registry.register(ttsFixture("vendor"));
    expect(() => registry.register(ttsFixture("vendor"))).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    registry.register(sttFixture("vendor"));
    expect(registry.list().map((p) => `${p.kind}/${p.id}`)).toEqual(["tts/vendor", "stt/vendor"]);
  });

  it("rejects a bad kind, a bad id, a missing method and undeclarable capabilities at register()", () => {
    const registry = new ProviderRegistry();
    const bad = (p: unknown) => () => registry.register(p as TalkProvider);
    expect(bad({ ...ttsFixture("x"), kind: "vision" })).toThrow(/kind "vision"/);
    expect(bad(ttsFixture("has space"))).toThrow(/id/);
    expect(bad({ ...ttsFixture("x"), synthesize: undefined })).toThrow(/synthesize/);
    expect(bad({ ...ttsFixture("x"), capabilities: { modes: ["karaoke"] } })).toThrow(/capabilities.modes/);
    expect(
      bad(realtimeFixture("r", { gatewayRelay: false, clientSessions: true, transports: ["webrtc"] })),
    ).not.toThrow();
    expect(bad({ ...realtimeFixture("r2"), createClientSession: undefined })).toThrow(
      /connect\(\) or createClientSession/,
    );
    expect(bad({ ...realtimeFixture("r3"), capabilities: { gatewayRelay: true } })).toThrow(
      /gatewayRelay without connect/,
    );
    for (const fn of [bad(null), bad({})])
      expect(fn).toThrow(expect.objectContaining({ code: "config_invalid" }));
    expect(registry.size).toBe(1);
  });

  it("looks providers up by kind and id", () => {
    const registry = new ProviderRegistry().register(agentFixture("brain")).register(ttsFixture("voice"));
    expect(registry.get("agent", "brain")?.label).toBe("Agent brain");
    expect(registry.get("tts", "brain")).toBeUndefined();
    expect(registry.list("tts").map((p) => p.id)).toEqual(["voice"]);
  });

  it("aggregates health, counting throwing and hanging checks as not ok", async () => {
    const registry = new ProviderRegistry({ healthTimeoutMs: 50 });
    registry.register(ttsFixture("fine"));
    registry.register({ ...sttFixture("broken"), health: () => Promise.reject(new Error("binary missing")) });
    registry.register({ ...agentFixture("stuck"), health: () => new Promise(() => {}) });
    const health = await registry.health();
    expect(health.ok).toBe(false);
    expect(health.providers).toEqual([
      { id: "fine", kind: "tts", ok: true },
      { id: "broken", kind: "stt", ok: false, detail: "binary missing" },
      { id: "stuck", kind: "agent", ok: false, detail: "health check timed out" },
    ]);
    const good = new ProviderRegistry().register(ttsFixture("fine"));
    expect((await good.health()).ok).toBe(true);
  });

  it("close() closes every provider once, containing failures", async () => {
    const closed: string[] = [];
    const registry = new ProviderRegistry();
    registry.register({ ...ttsFixture("a"), close: async () => void closed.push("a") });
    registry.register({ ...sttFixture("b"), close: () => Promise.reject(new Error("boom")) });
    registry.register({ ...agentFixture("c"), close: async () => void closed.push("c") });
    const first = registry.close();
    expect(registry.close()).toBe(first);
    await first;
    expect(closed).toEqual(["a", "c"]);
    expect(() => registry.register(ttsFixture("late"))).toThrow(
      expect.objectContaining({ code: "invalid_state" }),
    );
  });
});
