import { TalkError, toTalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { GatewayDeps } from "./gateway-deps.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import type { GatewayOptions } from "./gateway-options.js";
import type { CallerContext, MethodContext, MethodRegistry } from "./method-registry.js";
import { MAX_REQUEST_ID_LENGTH } from "./protocol/frames.js";
import type { ResponseFrame } from "./protocol/frames.js";
import type { SessionOwnership } from "./session-owners.js";
import type { RemoteSessions } from "./remote-sessions.js";
import type { TalkModeStore } from "./talk-mode-store.js";

export interface RpcDispatcherDeps {
  registry: MethodRegistry;
  deps: GatewayDeps;
  options: GatewayOptions;
  sessions: SessionOwnership;
  cluster?: RemoteSessions | undefined;
  mode: TalkModeStore;
  metrics: GatewayMetrics;
  logger: TalkLogger;
}

/** What the connection gives the dispatcher for one request. */
export interface RpcReply {
  send(frame: ResponseFrame): void;
}

/**
 * Turns one text frame into exactly one response: parse, find the method,
 * authorize, validate params, run the handler. Never throws: every failure
 * becomes a coded error response, so bad input cannot break the connection
 * or anything else.
 */
export class RpcDispatcher {
  readonly #d: RpcDispatcherDeps;

  constructor(deps: RpcDispatcherDeps) {
    this.#d = deps;
  }

  /** The request id of a frame, when it has a usable one (for rate-limited replies). */
  static peekId(text: string): string | null {
    try {
      const frame: unknown = JSON.parse(text);
      return requestId(frame);
    } catch {
      return null;
    }
  }

  async handle(text: string, caller: CallerContext, reply: RpcReply): Promise<void> {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.fail(reply, null, "unknown", new TalkError("invalid_request", "The frame is not valid JSON."));
      return;
    }
    const id = requestId(frame);
    if (!isRecord(frame) || frame.type !== "req" || id === null || typeof frame.method !== "string") {
      const message = `A request is {type:"req", id: string (1..${MAX_REQUEST_ID_LENGTH} chars), method: string, params?: object}.`;
      this.fail(reply, id, "unknown", new TalkError("invalid_request", message));
      return;
    }
    const method = this.#d.registry.get(frame.method);
    if (!method) {
      const name = frame.method.slice(0, 128);
      this.fail(
        reply,
        id,
        "unknown",
        new TalkError("unknown_method", `Unknown method "${name}".`, { details: { method: name } }),
      );
      return;
    }
    const label = method.name;
    const scopes = caller.principal.scopes;
    if (!scopes.has(method.scope)) {
      this.fail(reply, id, label, forbidden(label, method.scope, caller.principal.anonymous === true));
      return;
    }
    // Absent params are {}; anything else, null included, must be an object (docs/api.md, "Frames").
    const raw = frame.params === undefined ? {} : frame.params;
    if (!isRecord(raw)) {
      this.fail(
        reply,
        id,
        label,
        invalidParams([{ path: "params", message: "must be an object (or absent), not null" }]),
      );
      return;
    }
    const parsed = method.params.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: i.path.map(String).join(".") || "params",
        message: i.code === "unrecognized_keys" ? `unknown key(s): ${i.keys.join(", ")}` : i.message,
      }));
      this.fail(reply, id, label, invalidParams(issues));
      return;
    }
    const needed = method.definition.scopeFor?.(parsed.data as never) ?? method.scope;
    if (!scopes.has(needed)) {
      this.fail(reply, id, label, forbidden(label, needed, caller.principal.anonymous === true));
      return;
    }
    const after: (() => void)[] = [];
    const ctx: MethodContext = {
      caller,
      deps: this.#d.deps,
      options: this.#d.options,
      sessions: this.#d.sessions,
      cluster: this.#d.cluster,
      mode: this.#d.mode,
      metrics: this.#d.metrics,
      logger: this.#d.logger,
      afterResponse: (fn) => after.push(fn),
    };
    let payload: unknown;
    try {
      payload = await method.definition.handler(parsed.data as never, ctx);
    } catch (err) {
      this.fail(reply, id, label, err);
      return;
    }
    this.#d.metrics.rpcRequestsTotal.inc({ method: label, outcome: "ok" });
    reply.send({ type: "res", id, ok: true, payload: payload ?? null });
    for (const fn of after) {
      try {
        fn();
      } catch (err) {
        this.#d.logger.error({ err, method: label }, "post-response step failed");
      }
    }
  }

  /** Sends a coded error response. Internal errors are logged and answered without their detail. */
  fail(reply: RpcReply, id: string | null, method: string, err: unknown): void {
    let error = toTalkError(err);
    if (error.code === "internal") {
      this.#d.logger.error({ err, method }, "request failed");
      error = new TalkError("internal");
    }
    this.#d.metrics.rpcRequestsTotal.inc({ method, outcome: "error" });
    this.#d.metrics.rpcErrorsTotal.inc({ code: error.code });
    reply.send({ type: "res", id, ok: false, error: error.toJSON() });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requestId(frame: unknown): string | null {
  if (!isRecord(frame)) return null;
  const { id } = frame;
  return typeof id === "string" && id.length > 0 && id.length <= MAX_REQUEST_ID_LENGTH ? id : null;
}

/**
 * `anonymous`: the server has no tokens configured, so no caller holds a scope
 * beyond the anonymous ones; the message says how to configure one instead of
 * blaming a token that was never checked.
 */
function forbidden(method: string, scope: string, anonymous: boolean): TalkError {
  if (anonymous)
    return new TalkError(
      "forbidden",
      `${method} needs the "${scope}" scope, and this server has no tokens configured (authentication is off, ` +
        `so callers get only the anonymous scopes). Set TALKGATE_ADMIN_TOKEN (or auth.tokens) and restart.`,
      { details: { method, scope, tokensConfigured: false } },
    );
  return new TalkError("forbidden", `${method} needs the "${scope}" scope.`, { details: { method, scope } });
}

function invalidParams(issues: { path: string; message: string }[]): TalkError {
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
  return new TalkError("invalid_params", `Invalid params: ${summary}`, { details: { issues } });
}
