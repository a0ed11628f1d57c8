import type {
  AgentProvider,
  ProviderCapabilities,
  RealtimeProvider,
  SttProvider,
  TtsProvider,
} from "../provider-types.js";

/**
 * Minimal providers that satisfy the contracts, for tests of core's registry,
 * resolver and catalog (core may not import src/providers). Their methods
 * are never called by those tests; they exist so registration validation passes.
 */
const healthy = async () => ({ ok: true });

export function ttsFixture(id: string, capabilities: ProviderCapabilities = {}): TtsProvider {
  return {
    id,
    kind: "tts",
    label: `TTS ${id}`,
    capabilities,
    health: healthy,
    async *synthesize() {},
  };
}

export function sttFixture(id: string, capabilities: ProviderCapabilities = {}): SttProvider {
  return {
    id,
    kind: "stt",
    label: `STT ${id}`,
    capabilities,
    health: healthy,
    startStream() {
      return { write() {}, finish: async () => ({ text: "" }) };
    },
  };
}

export function agentFixture(id: string, capabilities: ProviderCapabilities = {}): AgentProvider {
  return {
    id,
    kind: "agent",
    label: `Agent ${id}`,
    capabilities,
    health: healthy,
    async *consult() {},
  };
}

export function realtimeFixture(id: string, capabilities: ProviderCapabilities = {}): RealtimeProvider {
  return {
    id,
    kind: "realtime",
    label: `Realtime ${id}`,
    capabilities,
    health: healthy,
    ...(capabilities.gatewayRelay
      ? {
          connect: () => Promise.reject(new Error("fixture cannot connect")),
        }
      : {}),
    createClientSession: async () => ({ clientSecret: "fixture", expiresAt: new Date(0).toISOString() }),
  };
}
