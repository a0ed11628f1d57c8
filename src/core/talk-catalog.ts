import type { AudioFormat, TalkBrain, TalkCombination, TalkMode, TalkTransport } from "./talk-types.js";
import {
  CLIENT_OWNED_TRANSPORTS,
  CREATION_MATRIX,
  TALK_BRAINS,
  TALK_MODES,
  TALK_TRANSPORTS,
} from "./talk-types.js";
import type { ProviderCapabilities, ProviderDescriptor, ProviderKind } from "./provider-types.js";
import type { ProviderDefaults } from "./provider-resolver.js";

export interface CatalogProvider {
  id: string;
  kind: ProviderKind;
  label: string;
  /** This provider is chosen when a request names none. */
  default: boolean;
  capabilities: ProviderCapabilities;
}

export interface CatalogCombination extends TalkCombination {
  method: "talk.client.create" | "talk.session.create";
  /** Every provider role this combination needs is filled by a declared provider. */
  available: boolean;
  /** Provider ids able to fill each role the combination needs. */
  providers: Partial<Record<ProviderKind, string[]>>;
}

/** The `talk.catalog` payload. */
export interface TalkCatalog {
  /** Modes, transports and brains of at least one available combination. */
  modes: TalkMode[];
  transports: TalkTransport[];
  brains: TalkBrain[];
  providers: CatalogProvider[];
  models: Record<ProviderKind, string[]>;
  voices: Record<ProviderKind, string[]>;
  inputFormats: AudioFormat[];
  outputFormats: AudioFormat[];
  /** Browser-safe client-owned sessions (talk.client.create) are possible. */
  clientSessions: boolean;
  gatewayRelay: boolean;
  managedRoom: boolean;
  localStt: boolean;
  localTts: boolean;
  creationMatrix: CatalogCombination[];
}

export interface BuildTalkCatalogOptions {
  /** Registered providers, in the order the catalog should list them. */
  providers: readonly ProviderDescriptor[];
  /** Configured default id per kind (default: none; a sole provider of a kind is its default). */
  defaults?: ProviderDefaults;
}

/**
 * The modes a provider serves: what it declares, else what its kind naturally
 * serves. Realtime providers serve transcription only when they say so.
 */
function servesMode(p: ProviderDescriptor, mode: TalkMode): boolean {
  if (p.capabilities.modes) return p.capabilities.modes.includes(mode);
  switch (p.kind) {
    case "realtime":
      return mode === "realtime";
    case "stt":
      return mode === "transcription" || mode === "stt-tts";
    case "tts":
      return mode === "stt-tts";
    case "agent":
      return true;
  }
}

function servesTransport(p: ProviderDescriptor, transport: TalkTransport): boolean {
  return p.capabilities.transports === undefined || p.capabilities.transports.includes(transport);
}

function ids(providers: readonly ProviderDescriptor[], pick: (p: ProviderDescriptor) => boolean): string[] {
  return providers.filter(pick).map((p) => p.id);
}

/** Role -> candidate ids for one combination; a role with no candidate makes it unavailable. */
function rolesFor(
  c: TalkCombination,
  providers: readonly ProviderDescriptor[],
): Partial<Record<ProviderKind, string[]>> {
  const of = (kind: ProviderKind, extra: (p: ProviderDescriptor) => boolean = () => true): string[] =>
    ids(
      providers,
      (p) => p.kind === kind && servesMode(p, c.mode) && servesTransport(p, c.transport) && extra(p),
    );
  const roles: Partial<Record<ProviderKind, string[]>> = {};
  if (c.mode === "realtime") {
    roles.realtime = CLIENT_OWNED_TRANSPORTS.has(c.transport)
      ? of("realtime", (p) => p.capabilities.clientSessions === true)
      : of("realtime", (p) => p.capabilities.gatewayRelay === true);
  } else if (c.mode === "transcription") {
    // Either a streaming STT engine or a relay-capable realtime provider that declares transcription.
    roles.stt = of("stt");
    roles.realtime = of("realtime", (p) => p.capabilities.gatewayRelay === true);
  } else {
    roles.stt = of("stt");
    roles.tts = of("tts");
  }
  if (c.brain === "agent-consult") roles.agent = of("agent");
  return roles;
}

function isAvailable(c: TalkCombination, roles: Partial<Record<ProviderKind, string[]>>): boolean {
  if (c.mode === "transcription") return (roles.stt?.length ?? 0) > 0 || (roles.realtime?.length ?? 0) > 0;
  return Object.values(roles).every((list) => list.length > 0);
}

function uniqueFormats(formats: Iterable<AudioFormat>): AudioFormat[] {
  const seen = new Map<string, AudioFormat>();
  for (const f of formats) seen.set(`${f.encoding}/${f.sampleRate}/${f.channels}`, { ...f });
  return [...seen.values()];
}

function byKind(
  providers: readonly ProviderDescriptor[],
  field: "models" | "voices",
): Record<ProviderKind, string[]> {
  const out: Record<ProviderKind, string[]> = { realtime: [], stt: [], tts: [], agent: [] };
  for (const p of providers) {
    for (const v of p.capabilities[field] ?? []) if (!out[p.kind].includes(v)) out[p.kind].push(v);
  }
  return out;
}

/**
 * Builds `talk.catalog` from capability declarations alone: a provider's id
 * is reported, never interpreted.
 */
export function buildTalkCatalog(options: BuildTalkCatalogOptions): TalkCatalog {
  const providers = options.providers;
  const defaults = options.defaults ?? {};
  const isDefault = (p: ProviderDescriptor): boolean => {
    const configured = defaults[p.kind];
    if (configured !== undefined) return configured === p.id;
    return providers.filter((q) => q.kind === p.kind).length === 1;
  };

  const creationMatrix: CatalogCombination[] = CREATION_MATRIX.map((c) => {
    const roles = rolesFor(c, providers);
    return {
      ...c,
      method: c.owner === "client" ? "talk.client.create" : "talk.session.create",
      available: isAvailable(c, roles),
      providers: roles,
    };
  });
  const available = creationMatrix.filter((c) => c.available);

  return {
    modes: TALK_MODES.filter((m) => available.some((c) => c.mode === m)),
    transports: TALK_TRANSPORTS.filter((t) => available.some((c) => c.transport === t)),
    brains: TALK_BRAINS.filter((b) => available.some((c) => c.brain === b)),
    providers: providers.map((p) => ({
      id: p.id,
      kind: p.kind,
      label: p.label,
      default: isDefault(p),
      capabilities: structuredClone(p.capabilities),
    })),
    models: byKind(providers, "models"),
    voices: byKind(providers, "voices"),
    inputFormats: uniqueFormats(
      providers
        .filter((p) => p.kind === "stt" || p.kind === "realtime")
        .flatMap((p) => p.capabilities.inputFormats ?? []),
    ),
    outputFormats: uniqueFormats(
      providers
        .filter((p) => p.kind === "tts" || p.kind === "realtime")
        .flatMap((p) => p.capabilities.outputFormats ?? []),
    ),
    clientSessions: available.some((c) => c.owner === "client"),
    gatewayRelay: available.some((c) => c.transport === "gateway-relay"),
    managedRoom: available.some((c) => c.transport === "managed-room"),
    localStt: providers.some((p) => p.kind === "stt" && p.capabilities.local === true),
    localTts: providers.some((p) => p.kind === "tts" && p.capabilities.local === true),
    creationMatrix,
  };
}
