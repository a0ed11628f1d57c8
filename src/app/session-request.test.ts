import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { ProviderRegistry } from "../core/provider-registry.js";
import { ProviderResolver } from "../core/provider-resolver.js";
import type { ProviderCapabilities, RealtimeProvider } from "../core/provider-types.js";
import { createLocalAgent } from "../providers/local-agent/local-agent.js";
import { createOpenAiRealtimeProvider } from "../providers/openai-realtime/openai-realtime-provider.js";
import { createPocketsphinxStt } from "../providers/pocketsphinx/pocketsphinx-stt.js";
import { checkSessionRequest, type SessionRequestFields } from "./session-request.js";

/** The real provider, declaring only what a provider written before reply paths declares (native). */
function nativeOnly(provider: RealtimeProvider): RealtimeProvider {
  const { replyPaths: _dropped, ...capabilities } = provider.capabilities;
  return Object.create(provider, {
    id: { value: "native-only" },
    capabilities: { value: capabilities satisfies ProviderCapabilities },
  }) as RealtimeProvider;
}

function refusal(registry: ProviderRegistry, request: SessionRequestFields): TalkError {
  try {
    checkSessionRequest(
      registry,
      new ProviderResolver({ registry, defaults: { realtime: "openai" } }),
      request,
    );
  } catch (err) {
    if (err instanceof TalkError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("talk.session.create replyPath, checked against the providers", () => {
  const realtime = createOpenAiRealtimeProvider({ id: "openai", apiKey: "k" });
  const full = () =>
    new ProviderRegistry()
      .register(realtime)
      .register(nativeOnly(realtime))
      .register(createPocketsphinxStt())
      .register(createLocalAgent());

  it("takes every path a provider declares when STT and agent are there", () => {
    const registry = full();
    const resolver = new ProviderResolver({ registry, defaults: { realtime: "openai" } });
    for (const replyPath of ["native", "bridge", "brain"] as const)
      expect(() => checkSessionRequest(registry, resolver, { mode: "realtime", replyPath })).not.toThrow();
  });

  it("a provider that does not declare the path refuses it, naming the field", () => {
    const err = refusal(full(), { mode: "realtime", provider: "native-only", replyPath: "bridge" });
    expect(err.code).toBe("invalid_params");
    expect(err.details).toMatchObject({ field: "replyPath", reason: "provider_unsupported" });
    expect(err.message).toContain("native-only");
  });

  it("bridge needs an STT provider, brain an agent", () => {
    const noStt = new ProviderRegistry().register(realtime).register(createLocalAgent());
    expect(refusal(noStt, { mode: "realtime", replyPath: "bridge" }).details).toMatchObject({
      field: "replyPath",
      reason: "no_stt_provider",
    });
    const noAgent = new ProviderRegistry().register(realtime).register(createPocketsphinxStt());
    expect(refusal(noAgent, { mode: "realtime", replyPath: "brain" }).details).toMatchObject({
      field: "replyPath",
      reason: "no_agent_provider",
    });
  });

  it("a mode without a realtime provider has no reply path", () => {
    expect(refusal(full(), { mode: "transcription", replyPath: "native" }).details).toMatchObject({
      field: "replyPath",
      reason: "mode",
    });
  });

  it("the registry refuses a declaration it does not know", () => {
    const bad = Object.create(realtime, {
      id: { value: "bad" },
      capabilities: { value: { ...realtime.capabilities, replyPaths: ["psychic"] } },
    }) as RealtimeProvider;
    expect(() => new ProviderRegistry().register(bad)).toThrow(/replyPaths/);
  });
});
