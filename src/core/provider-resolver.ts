import { TalkError } from "./errors.js";
import type { ProviderCapabilities, ProviderKind } from "./provider-types.js";
import type { ProviderByKind, ProviderRegistry } from "./provider-registry.js";
import type { TalkMode, TalkTransport } from "./talk-types.js";

/** Configured default provider id per kind (talk.provider, talk.realtime.provider, ...). */
export type ProviderDefaults = Partial<Record<ProviderKind, string>>;

export interface ProviderResolverOptions {
  registry: ProviderRegistry;
  /** Default id per kind, used when a request names none (default: none). */
  defaults?: ProviderDefaults;
}

/** What the caller needs the provider to declare. */
export interface ProviderRequirements {
  mode?: TalkMode;
  transport?: TalkTransport;
  clientSessions?: boolean;
  gatewayRelay?: boolean;
  model?: string;
  voice?: string;
}

/** Whether declared capabilities satisfy the requirements. Undeclared lists restrict nothing; flags must be declared true. */
export function satisfies(capabilities: ProviderCapabilities, req: ProviderRequirements): string | undefined {
  if (req.mode && capabilities.modes && !capabilities.modes.includes(req.mode)) return `mode ${req.mode}`;
  if (req.transport && capabilities.transports && !capabilities.transports.includes(req.transport)) {
    return `transport ${req.transport}`;
  }
  if (req.clientSessions && capabilities.clientSessions !== true) return "clientSessions";
  if (req.gatewayRelay && capabilities.gatewayRelay !== true) return "gatewayRelay";
  if (req.model && capabilities.models && !capabilities.models.includes(req.model))
    return `model ${req.model}`;
  if (req.voice && capabilities.voices && !capabilities.voices.includes(req.voice))
    return `voice ${req.voice}`;
  return undefined;
}

/**
 * Picks the provider for a kind: the id asked for, else the configured
 * default, else the only one registered. Several candidates and no default is
 * a configuration error, never a guess.
 */
export class ProviderResolver {
  readonly #registry: ProviderRegistry;
  readonly #defaults: ProviderDefaults;

  constructor(options: ProviderResolverOptions) {
    this.#registry = options.registry;
    this.#defaults = Object.freeze({ ...(options.defaults ?? {}) });
    for (const [kind, id] of Object.entries(this.#defaults)) {
      if (typeof id !== "string" || id.length === 0) {
        throw new TalkError("config_invalid", `The default ${kind} provider must be a non-empty id.`);
      }
    }
  }

  get defaults(): ProviderDefaults {
    return this.#defaults;
  }

  /**
   * Checks that every configured default is registered. Called at startup so
   * a typo fails there, not on the first call.
   */
  validateDefaults(): void {
    for (const [kind, id] of Object.entries(this.#defaults) as [ProviderKind, string][]) {
      if (!this.#registry.has(kind, id)) {
        throw new TalkError("config_invalid", `The default ${kind} provider "${id}" is not registered.`, {
          details: { kind, id },
        });
      }
    }
  }

  /** The default id for a kind, if one would be chosen (configured or the only registered). */
  defaultId(kind: ProviderKind): string | undefined {
    const configured = this.#defaults[kind];
    if (configured !== undefined) return configured;
    const candidates = this.#registry.list(kind);
    return candidates.length === 1 ? candidates[0]?.id : undefined;
  }

  /**
   * Resolves a provider. Throws provider_not_found for an unknown id or an
   * empty kind, config_invalid when the choice is ambiguous, and
   * capability_unsupported when the provider does not declare what is required.
   */
  resolve<K extends ProviderKind>(
    kind: K,
    id?: string,
    require: ProviderRequirements = {},
  ): ProviderByKind[K] {
    const wanted = id ?? this.#defaults[kind];
    let provider: ProviderByKind[K] | undefined;
    if (wanted !== undefined) {
      provider = this.#registry.get(kind, wanted);
      if (!provider)
        throw new TalkError("provider_not_found", `No ${kind} provider "${wanted}".`, {
          details: { kind, id: wanted },
        });
    } else {
      const candidates = this.#registry.list(kind);
      if (candidates.length === 0)
        throw new TalkError("provider_not_found", `No ${kind} provider is registered.`, {
          details: { kind },
        });
      if (candidates.length > 1) {
        throw new TalkError(
          "config_invalid",
          `Several ${kind} providers are registered and none is the default.`,
          {
            details: { kind, ids: candidates.map((p) => p.id) },
          },
        );
      }
      provider = candidates[0];
    }
    if (!provider) throw new TalkError("provider_not_found", undefined, { details: { kind } });
    const missing = satisfies(provider.capabilities, require);
    if (missing) {
      throw new TalkError(
        "capability_unsupported",
        `${kind} provider "${provider.id}" does not declare ${missing}.`,
        {
          details: { kind, id: provider.id, missing },
        },
      );
    }
    return provider;
  }
}
