import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import WebSocket from "ws";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { Principal } from "./auth.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import type { GatewayOptions } from "./gateway-options.js";
import type { CallerContext } from "./method-registry.js";
import { CLOSE_CODES } from "./protocol/frames.js";
import type { GatewayEventName, ServerFrame } from "./protocol/frames.js";
import { RpcDispatcher } from "./rpc-dispatcher.js";
import type { QueuedSocket, QueueLimit, SendQueueBudget } from "./send-queue-budget.js";
import type { SessionOwnership } from "./session-owners.js";
import { TokenBucket } from "./token-bucket.js";
import { wsProtocolFault } from "./ws-protocol-fault.js";

export interface GatewayConnectionDeps {
  options: GatewayOptions;
  dispatcher: RpcDispatcher;
  sessions: SessionOwnership;
  metrics: GatewayMetrics;
  /** The bounds on replies queued and not read (per connection, per token, in total), shared by every connection. */
  budget: SendQueueBudget;
  logger: TalkLogger;
  /** Told once when the socket is gone. */
  onClosed(connection: GatewayConnection): void;
}

/**
 * One /talk WebSocket. Transport concerns live here (rate limit, frame kinds,
 * back-pressure, heartbeat, close); request semantics live in the dispatcher.
 */
export class GatewayConnection implements CallerContext {
  readonly id = randomUUID();
  readonly principal: Principal;
  readonly #ws: WebSocket;
  readonly #d: GatewayConnectionDeps;
  readonly #bucket: TokenBucket;
  readonly #abort = new AbortController();
  readonly #reply = { send: (frame: ServerFrame) => this.#send(frame) };
  /** This connection's queue as the budget sees it. */
  readonly #queue: QueuedSocket;
  #rejectedInARow = 0;
  #alive = true;
  #closed = false;
  /** The close code this side sent first (a protocol fault's or our own close()); undefined: the peer closed first, or nobody did. */
  #sentCloseCode: number | undefined;

  constructor(ws: WebSocket, principal: Principal, deps: GatewayConnectionDeps) {
    this.#ws = ws;
    this.principal = principal;
    this.#d = deps;
    // Each request in flight (a talk.speak's synthesis) follows the connection's signal with one listener,
    // removed when it finishes: a client with eleven requests in flight is no leak (Node warns at eleven).
    setMaxListeners(0, this.#abort.signal);
    this.#bucket = new TokenBucket({
      capacity: deps.options.rateLimit.burst,
      ratePerSecond: deps.options.rateLimit.requestsPerSecond,
    });
    this.#queue = {
      get queuedBytes() {
        return ws.bufferedAmount;
      },
      principal: principal.name,
      cut: (limit, queuedBytes) => this.#cut(limit, queuedBytes),
    };
    deps.budget.add(this.#queue);
    ws.on("message", (data, isBinary) => this.#onMessage(data, isBinary));
    ws.on("pong", () => {
      this.#alive = true;
    });
    ws.on("close", (code) => this.#onClose(code));
    // 'error' precedes 'close' (e.g. 1009 for an oversized frame); the close handler cleans up.
    ws.on("error", (err) => {
      this.#sentCloseCode ??= wsProtocolFault(err)?.closeCode;
      this.#d.logger.debug({ err, connection: this.id }, "websocket error");
    });
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#closed;
  }

  sendEvent(event: GatewayEventName, payload: unknown, seq?: number): void {
    this.#send({ type: "event", event, payload, ...(seq !== undefined ? { seq } : {}) });
  }

  /** Heartbeat tick: drops a peer that did not answer the previous ping, then pings again. */
  heartbeat(): void {
    if (this.#closed) return;
    if (!this.#alive) {
      this.#d.logger.info({ connection: this.id }, "peer missed a heartbeat; dropping it");
      this.#ws.terminate();
      return;
    }
    this.#alive = false;
    try {
      this.#ws.ping();
    } catch {
      // The socket is closing; the close handler cleans up.
    }
  }

  close(code: number, reason: string): void {
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) {
      this.#sentCloseCode ??= code;
      this.#ws.close(code, reason);
    }
  }

  /** Ends the socket without a closing handshake (shutdown fallback). */
  terminate(): void {
    this.#ws.terminate();
  }

  /** Resolves once the socket has closed. */
  whenClosed(): Promise<void> {
    if (this.#ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => this.#ws.once("close", () => resolve()));
  }

  #send(frame: ServerFrame): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    // A peer that does not read would otherwise grow our memory without bound (send-queue-budget.ts).
    if (!this.#d.budget.admits(this.#queue)) return;
    this.#ws.send(JSON.stringify(frame));
    this.#d.budget.sent(this.#queue);
  }

  /** A slow reader past a bound: cut at once, its queue freed (a close frame would wait behind it). */
  #cut(limit: QueueLimit, queuedBytes: number): void {
    this.#d.logger.warn(
      { connection: this.id, principal: this.principal.name, limit, queuedBytes },
      "slow consumer; cut",
    );
    this.#d.metrics.slowConsumersTotal.inc({ limit });
    this.#ws.terminate();
  }

  #onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.#closed) return;
    const text = isBinary ? undefined : rawToString(data);
    if (!this.#bucket.take()) {
      this.#rejectedInARow += 1;
      if (this.#rejectedInARow > this.#d.options.maxRejectedRequests) {
        this.#d.logger.warn(
          { connection: this.id, principal: this.principal.name },
          "rate limit abuse; closing",
        );
        this.close(CLOSE_CODES.policyViolation, "rate limit exceeded");
        return;
      }
      const id = text === undefined ? null : RpcDispatcher.peekId(text);
      this.#d.dispatcher.fail(this.#reply, id, "unknown", new TalkError("rate_limited"));
      return;
    }
    this.#rejectedInARow = 0;
    if (text === undefined) {
      this.#d.dispatcher.fail(
        this.#reply,
        null,
        "unknown",
        new TalkError("invalid_request", "Binary frames are not accepted; send JSON text frames."),
      );
      return;
    }
    void this.#d.dispatcher.handle(text, this, this.#reply);
  }

  #onClose(code: number): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort(new TalkError("cancelled", "The connection closed."));
    this.#d.budget.delete(this.#queue);
    this.#d.sessions.release(this);
    // The code actually sent: ws reports 1006 for a close we started when the peer never answered it.
    this.#d.metrics.wsClosedTotal.inc({ code: String(this.#sentCloseCode ?? code) });
    this.#d.onClosed(this);
  }
}

function rawToString(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}
