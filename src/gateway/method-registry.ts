import type { z } from "zod";
import type { TalkLogger } from "../core/index.js";
import type { GatewayDeps } from "./gateway-deps.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import { GATEWAY_SCOPES, type GatewayOptions, type GatewayScope } from "./gateway-options.js";
import type { Principal } from "./auth.js";
import type { GatewayEventName } from "./protocol/frames.js";
import { TalkError } from "../core/index.js";
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

/**
 * A method a surface (telephony, meetings) adds to the Gateway's WebSocket
 * API, beside the public Talk methods. Its handler sees only the caller and
 * a logger, never the Gateway's internals.
 */
export interface SurfaceMethodDefinition<P = unknown, R = unknown> {
  /** Scope needed to call it (admin implies write implies read). */
  readonly scope: GatewayScope;
  /** Params schema; make it strict so unknown keys are invalid_params like every Talk method. */
  readonly params: z.ZodType<P>;
  handler(params: P, ctx: SurfaceMethodContext): Promise<R> | R;
}

export interface SurfaceMethodContext {
  readonly caller: {
    readonly principal: Principal;
    /** Aborted when the connection closes or the server shuts down. */
    readonly signal: AbortSignal;
    /**
     * Sends a surface event (`<surface>.<event>`, outside talk.*) to this
     * connection only (a follow's stream); nothing once it closed.
     */
    sendEvent(event: string, payload: unknown): void;
  };
  readonly logger: TalkLogger;
  /** Runs `fn` right after this request's response frame was sent (start a stream after its answer). */
  afterResponse(fn: () => void): void;
}

/** `<surface>.<verb>`: lower-case surface name, a dot, then a camelCase verb path. */
const SURFACE_METHOD_NAME = /^[a-z][a-z0-9-]{0,31}(\.[a-z][a-zA-Z0-9]{0,63}){1,3}$/;
/** The public Talk API's namespace: surfaces may not add names to it (seed 000, "Removed API"). */
const RESERVED_PREFIX = "talk.";

/** Whether `name` may be a surface method or event: `<surface>.<verb>`, outside `talk.*`. */
export function isSurfaceName(name: string): boolean {
  return typeof name === "string" && SURFACE_METHOD_NAME.test(name) && !name.startsWith(RESERVED_PREFIX);
}

export interface RegisteredMethod {
  readonly name: string;
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
          throw new TalkError("config_invalid", `method-registry: "${name}" is not a public Talk method`);
        }
        if (this.#methods.has(name))
          throw new TalkError("config_invalid", `method-registry: "${name}" is registered twice`);
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
    if (missing.length > 0)
      throw new TalkError("config_invalid", `method-registry: no handler for ${missing.join(", ")}`);
  }

  /**
   * Adds a surface method (e.g. `telephony.call`). Checked here, not on the
   * hot path: the name must be `<surface>.<verb>` outside the reserved
   * `talk.` namespace and not taken, the scope a Gateway scope, the params a
   * zod schema. Throws config_invalid. Register at start-up, before clients
   * connect.
   */
  registerSurface<P, R>(name: string, definition: SurfaceMethodDefinition<P, R>): void {
    const refuse = (why: string): never => {
      throw new TalkError(
        "config_invalid",
        `method-registry: surface method "${String(name).slice(0, 128)}" ${why}`,
      );
    };
    if (typeof name !== "string" || !SURFACE_METHOD_NAME.test(name))
      refuse("must be named <surface>.<verb> (lower-case surface, camelCase verb)");
    if (name.startsWith(RESERVED_PREFIX))
      refuse("is in the reserved talk.* namespace of the public Talk API");
    if (this.#methods.has(name)) refuse("is registered twice");
    if (!(GATEWAY_SCOPES as readonly string[]).includes(definition?.scope))
      refuse(`has no valid scope (${GATEWAY_SCOPES.join(", ")})`);
    if (typeof definition.params?.safeParse !== "function") refuse("needs a zod params schema");
    if (typeof definition.handler !== "function") refuse("needs a handler");
    const surface: MethodDefinition<TalkMethod> = {
      scope: definition.scope,
      handler: (params, ctx) =>
        definition.handler(params as P, {
          caller: {
            principal: ctx.caller.principal,
            signal: ctx.caller.signal,
            sendEvent: (event, payload) => {
              if (!isSurfaceName(event)) {
                throw new TalkError(
                  "config_invalid",
                  `surface event "${String(event).slice(0, 128)}" must be named <surface>.<event> outside talk.*`,
                );
              }
              if (!ctx.caller.closed) ctx.caller.sendEvent(event as GatewayEventName, payload);
            },
          },
          logger: ctx.logger,
          afterResponse: (fn) => ctx.afterResponse(fn),
        }) as never,
    };
    this.#methods.set(name, {
      name,
      scope: definition.scope,
      params: definition.params,
      definition: surface,
    });
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
