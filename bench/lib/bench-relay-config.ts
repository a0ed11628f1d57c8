/**
 * The `talk` and `telephony` config of a bench relay: realtime calls to the
 * load provider stand-in on `providerPort`, with limits far above what a
 * bench reaches (the bench measures the relay, not the admission limits).
 */
export function benchRelayConfig(providerPort: number) {
  return {
    talk: {
      realtime: {
        provider: "openai",
        providers: { openai: { apiKey: "sk-bench", baseUrl: `http://127.0.0.1:${providerPort}/v1` } },
      },
    },
    telephony: {
      defaultMode: "realtime",
      limits: {
        maxConnections: 20_000,
        maxPendingConnections: 5_000,
        maxConnectionsPerIp: 20_000,
        maxPendingOutboundCalls: 100,
      },
    },
  };
}
