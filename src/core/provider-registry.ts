import { TalkError } from "./errors.js";
import { NOOP_LOGGER } from "./logger.js";
import type { TalkLogger } from "./logger.js";
import type {
  AgentProvider,
  ProviderKind,
  RealtimeProvider,
  SttProvider,
  TalkProvider,
  TtsProvider,
} from "./provider-types.js";
import { TALK_MODES, TALK_TRANSPORTS } from "./talk-types.js";

export const PROVIDER_KINDS: readonly ProviderKind[] = Object.freeze(["realtime", "stt", "tts", "agent"]);

/** Maps a kind to its contract, so lookups come back typed. */
export interface ProviderByKind {
  realtime: RealtimeProvider;
  stt: SttProvider;
  tts: TtsProvider;
  agent: AgentProvider;
}

export interface ProviderRegistryOptions {
  /** How long one provider's health() may take before it counts as unhealthy, ms (default 2000). */
  healthTimeoutMs?: number;
  logger?: TalkLogger;
}

export interface ProviderHealthEntry {
  id: string;
  kind: ProviderKind;
  ok: boolean;
  detail?: string;
}

export interface ProvidersHealth {
  /** True when every registered provider reports ok (and there is at least one). */
  ok: boolean;
  providers: ProviderHealthEntry[];
}

const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** The method each kind must implement; a provider missing it would fail mid-call instead of at startup. */
const REQUIRED_METHODS: Record<ProviderKind, readonly string[]> = {
  realtime: [],
  stt: ["startStream"],
  tts: ["synthesize"],
  agent: ["consult"],
};

function invalid(message: string, details: Record<string, unknown>): TalkError {
  return new TalkError("config_invalid", message, { details });
}

function validateProvider(provider: TalkProvider): void {
  if (provider === null || typeof provider !== "object") throw invalid("A provider must be an object.", {});
  const p = provider as unknown as Record<string, unknown>;
  const id = p["id"];
  if (typeof id !== "string" || !PROVIDER_ID.test(id)) {
    throw invalid(`Provider id ${JSON.stringify(id)} is invalid: use 1-64 of [A-Za-z0-9._:-].`, { id });
  }
  const kind = p["kind"];
  if (typeof kind !== "string" || !PROVIDER_KINDS.includes(kind as ProviderKind)) {
    throw invalid(
      `Provider "${id}" has kind ${JSON.stringify(kind)}; expected one of ${PROVIDER_KINDS.join(", ")}.`,
      { id, kind },
    );
  }
  if (typeof p["label"] !== "string") throw invalid(`Provider "${id}" needs a label.`, { id });
  if (typeof p["health"] !== "function") throw invalid(`Provider "${id}" needs a health() method.`, { id });
  for (const method of REQUIRED_METHODS[kind as ProviderKind]) {
    if (typeof p[method] !== "function")
      throw invalid(`${kind} provider "${id}" needs ${method}().`, { id, kind });
  }
  if (
    kind === "realtime" &&
    typeof p["connect"] !== "function" &&
    typeof p["createClientSession"] !== "function"
  ) {
    throw invalid(`Realtime provider "${id}" needs connect() or createClientSession().`, { id });
  }
  const caps = p["capabilities"];
  if (caps === null || typeof caps !== "object")
    throw invalid(`Provider "${id}" needs a capabilities declaration.`, { id });
  const c = caps as Record<string, unknown>;
  const listOf = (field: string, allowed?: readonly string[]): void => {
    const value = c[field];
    if (value === undefined) return;
    if (
      !Array.isArray(value) ||
      value.some((v) => typeof v !== "string" || (allowed && !allowed.includes(v)))
    ) {
      throw invalid(`Provider "${id}" declares an invalid capabilities.${field}.`, { id, field });
    }
  };
  listOf("modes", TALK_MODES);
  listOf("transports", TALK_TRANSPORTS);
  listOf("models");
  listOf("voices");
  listOf("replyPaths", ["native", "bridge", "brain"]);
  // A reply path is a way of driving a Gateway-owned session: it needs connect().
  if (Array.isArray(c["replyPaths"]) && c["replyPaths"].length > 0 && typeof p["connect"] !== "function") {
    throw invalid(`Provider "${id}" declares replyPaths without connect().`, { id });
  }
  // Declarations the provider cannot back are refused: the catalog would advertise them.
  if (c["clientSessions"] === true && typeof p["createClientSession"] !== "function") {
    throw invalid(`Provider "${id}" declares clientSessions without createClientSession().`, { id });
  }
  if (c["gatewayRelay"] === true && typeof p["connect"] !== "function") {
    throw invalid(`Provider "${id}" declares gatewayRelay without connect().`, { id });
  }
}

/**
 * Providers by kind and id, validated when registered. Ids are unique within
 * a kind (one vendor may serve STT and TTS under the same id). Iteration
 * order is registration order, which keeps the catalog stable.
 */
export class ProviderRegistry {
  readonly #providers = new Map<string, TalkProvider>();
  readonly #healthTimeoutMs: number;
  readonly #logger: TalkLogger;
  #closePromise: Promise<void> | undefined;

  constructor(options: ProviderRegistryOptions = {}) {
    const timeout = options.healthTimeoutMs ?? 2000;
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw new TalkError(
        "config_invalid",
        "ProviderRegistryOptions.healthTimeoutMs must be a positive number.",
      );
    }
    this.#healthTimeoutMs = timeout;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  /** Registers a provider. Throws config_invalid for a malformed provider or a duplicate kind/id. */
  register(provider: TalkProvider): this {
    if (this.#closePromise) throw new TalkError("invalid_state", "The provider registry is closed.");
    validateProvider(provider);
    const key = `${provider.kind}/${provider.id}`;
    if (this.#providers.has(key)) {
      throw invalid(`A ${provider.kind} provider with id "${provider.id}" is already registered.`, {
        id: provider.id,
        kind: provider.kind,
      });
    }
    this.#providers.set(key, provider);
    return this;
  }

  get<K extends ProviderKind>(kind: K, id: string): ProviderByKind[K] | undefined {
    return this.#providers.get(`${kind}/${id}`) as ProviderByKind[K] | undefined;
  }

  has(kind: ProviderKind, id: string): boolean {
    return this.#providers.has(`${kind}/${id}`);
  }

  list(): TalkProvider[];
  list<K extends ProviderKind>(kind: K): ProviderByKind[K][];
  list(kind?: ProviderKind): TalkProvider[] {
    const all = [...this.#providers.values()];
    return kind === undefined ? all : all.filter((p) => p.kind === kind);
  }

  get size(): number {
    return this.#providers.size;
  }

  /** Health of every provider for /readyz. A throwing or hanging health() counts as not ok. */
  async health(): Promise<ProvidersHealth> {
    const providers = await Promise.all(this.list().map((p) => this.#probe(p)));
    return { ok: providers.length > 0 && providers.every((p) => p.ok), providers };
  }

  /** Closes every provider, each failure contained. Idempotent. */
  close(): Promise<void> {
    this.#closePromise ??= (async () => {
      for (const provider of this.list()) {
        try {
          await provider.close?.();
        } catch (err) {
          this.#logger.warn({ err, provider: provider.id, kind: provider.kind }, "provider close failed");
        }
      }
    })();
    return this.#closePromise;
  }

  async #probe(provider: TalkProvider): Promise<ProviderHealthEntry> {
    const base = { id: provider.id, kind: provider.kind };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ProviderHealthEntry>((resolve) => {
      timer = setTimeout(
        () => resolve({ ...base, ok: false, detail: "health check timed out" }),
        this.#healthTimeoutMs,
      );
      timer.unref();
    });
    const check = (async (): Promise<ProviderHealthEntry> => {
      try {
        const h = await provider.health();
        return { ...base, ok: h.ok === true, ...(h.detail !== undefined ? { detail: h.detail } : {}) };
      } catch (err) {
        return { ...base, ok: false, detail: err instanceof Error ? err.message : String(err) };
      }
    })();
    try {
      return await Promise.race([check, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
