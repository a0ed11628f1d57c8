import type { z } from "zod";
import type { TalkLogger } from "../core/logger.js";
import type { GatewayDeps } from "./gateway-deps.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import type { GatewayOptions, GatewayScope } from "./gateway-options.js";
import type { Principal } from "./auth.js";
import type { SessionOwnership, SessionPeer } from "./session-owners.js";
import type { RemoteSessions } from "./remote-sessions.js";
import type { TalkModeStore } from "./talk-mode-store.js";
import { TALK_METHODS, TALK_PARAM_SCHEMAS } from "./protocol/talk-methods.js";
import type { TalkMethod, TalkParsedParams, TalkResult } from "./protocol/talk-methods.js";

/** The calling connection, as handlers see it. */
export interface CallerContext extends SessionPeer {
  readonly principal: Principal;
  /** Aborted when the connection closes or the server shuts down: in-flight work must stop. */
  readonly signal: AbortSignal;
}

/** What a handler may use: narrow on purpose, no access to the socket or the server. */
export interface MethodContext {
  readonly caller: CallerContext;
  readonly deps: GatewayDeps;
  readonly options: GatewayOptions;
  readonly sessions: SessionOwnership;
  /** Sessions on other workers (cluster only; undefined in a single process). */
  readonly cluster: RemoteSessions | undefined;
  readonly mode: TalkModeStore;
  readonly metrics: GatewayMetrics;
  readonly logger: TalkLogger;
  /** Runs `fn` right after this request's response frame was sent (e.g. start event delivery). */
  afterResponse(fn: () => void): void;
}

export interface MethodDefinition<M extends TalkMethod> {
  /** Scope needed to call the method at all. */
  readonly scope: GatewayScope;
  /** A stricter scope some params need (e.g. setting talk.mode). */
  scopeFor?(params: TalkParsedParams<M>): GatewayScope;
  handler(params: TalkParsedParams<M>, ctx: MethodContext): Promise<TalkResult<M>> | TalkResult<M>;
}

export type MethodGroup = { readonly [M in TalkMethod]?: MethodDefinition<M> };

export interface RegisteredMethod {
  readonly name: TalkMethod;
  readonly scope: GatewayScope;
  readonly params: z.ZodType;
  readonly definition: MethodDefinition<TalkMethod>;
}

/**
 * name → {scope, params schema, handler}. Built once from the method groups
 * (talk.ts, talk-client.ts, talk-session.ts) and checked when built: every
 * public method has exactly one handler and nothing else is registered, so
 * a removed name cannot come back through a stray handler.
 */
export class MethodRegistry {
  readonly #methods = new Map<string, RegisteredMethod>();

  constructor(groups: readonly MethodGroup[]) {
    for (const group of groups) {
      for (const [name, definition] of Object.entries(group)) {
        if (!(TALK_METHODS as readonly string[]).includes(name)) {
          throw new Error(`method-registry: "${name}" is not a public Talk method`);
        }
        if (this.#methods.has(name)) throw new Error(`method-registry: "${name}" is registered twice`);
        const method = name as TalkMethod;
        this.#methods.set(name, {
          name: method,
          scope: (definition as MethodDefinition<TalkMethod>).scope,
          params: TALK_PARAM_SCHEMAS[method],
          definition: definition as MethodDefinition<TalkMethod>,
        });
      }
    }
    const missing = TALK_METHODS.filter((m) => !this.#methods.has(m));
    if (missing.length > 0) throw new Error(`method-registry: no handler for ${missing.join(", ")}`);
  }

  get(name: string): RegisteredMethod | undefined {
    return this.#methods.get(name);
  }

  /** Method names, in registration order. */
  names(): string[] {
    return [...this.#methods.keys()];
  }

  /** The scope table (method → scope needed to call it), as documented in docs/api.md. */
  scopes(): Record<string, GatewayScope> {
    return Object.fromEntries([...this.#methods.values()].map((m) => [m.name, m.scope]));
  }
}
