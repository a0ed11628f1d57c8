/**
 * The memory a server spends on replies its Talk API clients have not read.
 * A client that stops reading leaves every frame sent to it in the socket's
 * queue (ws's `bufferedAmount`): one such client could hold
 * `maxBufferedBytes`, and every connection allowed could do the same (issue
 * 38: five never-reading clients took a server from 159 to 545 MB). So the
 * queues are bounded three ways: per connection, per client (all the
 * connections of one principal: one auth token) and in total; when a bound is passed, the
 * connections with the longest queues (the slowest readers) are cut first,
 * until it holds again. A cut socket is terminated, not closed: a closing
 * handshake would wait behind the very queue nobody reads, holding its
 * memory until ws's close timeout.
 *
 * Reading every socket's queue on every send would cost O(connections) per
 * frame, so totals are kept from each socket's last seen queue (a queue only
 * shrinks between our own sends, so they are upper bounds), and counted
 * exactly only when an estimate passes a bound.
 */

/** One connection as the budget sees it. */
export interface QueuedSocket {
  /** Bytes queued on the socket now (ws's bufferedAmount). */
  readonly queuedBytes: number;
  /** The principal whose bound it counts against (token name). */
  readonly principal: string;
  /** Cuts the connection at once (terminate): its queue is freed. */
  cut(limit: QueueLimit, queuedBytes: number): void;
}

/** Which bound a cut connection passed. */
export type QueueLimit = "connection" | "client" | "total";

export interface SendQueueBudgetOptions {
  /** Bytes one connection may have queued. */
  maxPerConnection: number;
  /** Bytes the connections of one client (one auth token) may have queued together. */
  maxPerClient: number;
  /** Bytes every connection may have queued together. */
  maxTotal: number;
}

export class SendQueueBudget {
  readonly #o: SendQueueBudgetOptions;
  /** Each connection's queue when last seen. */
  readonly #seen = new Map<QueuedSocket, number>();
  readonly #byClient = new Map<string, { sockets: Set<QueuedSocket>; estimate: number }>();
  #estimate = 0;

  constructor(options: SendQueueBudgetOptions) {
    this.#o = options;
  }

  /** Bytes queued on every connection now (exact; reads each socket). */
  get queuedBytes(): number {
    let total = 0;
    for (const socket of this.#seen.keys()) total += socket.queuedBytes;
    return total;
  }

  add(socket: QueuedSocket): void {
    if (this.#seen.has(socket)) return;
    this.#seen.set(socket, 0);
    let client = this.#byClient.get(socket.principal);
    if (!client) this.#byClient.set(socket.principal, (client = { sockets: new Set(), estimate: 0 }));
    client.sockets.add(socket);
  }

  delete(socket: QueuedSocket): void {
    const seen = this.#seen.get(socket);
    if (seen === undefined) return;
    this.#seen.delete(socket);
    this.#estimate -= seen;
    const client = this.#byClient.get(socket.principal);
    if (!client) return;
    client.sockets.delete(socket);
    client.estimate -= seen;
    if (client.sockets.size === 0) this.#byClient.delete(socket.principal);
  }

  /**
   * Whether `socket` may be sent one more frame: false (and the connection
   * is cut) when its own queue is past its bound already.
   */
  admits(socket: QueuedSocket): boolean {
    const queued = socket.queuedBytes;
    if (queued <= this.#o.maxPerConnection) return true;
    this.#cut(socket, "connection", queued);
    return false;
  }

  /** A frame was queued on `socket`: the bounds of its client and of all are checked, slowest cut first. */
  sent(socket: QueuedSocket): void {
    const before = this.#seen.get(socket);
    if (before === undefined) return;
    const queued = socket.queuedBytes;
    this.#seen.set(socket, queued);
    this.#estimate += queued - before;
    const client = this.#byClient.get(socket.principal)!;
    client.estimate += queued - before;
    if (client.estimate > this.#o.maxPerClient) this.#enforce(client.sockets, this.#o.maxPerClient, "client");
    if (this.#estimate > this.#o.maxTotal) this.#enforce(this.#seen.keys(), this.#o.maxTotal, "total");
  }

  /** Counts `sockets` exactly; while they hold more than `max`, cuts the one with the longest queue. */
  #enforce(sockets: Iterable<QueuedSocket>, max: number, limit: QueueLimit): void {
    const queues = [...sockets].map((socket) => ({ socket, queued: this.#refresh(socket) }));
    let total = queues.reduce((sum, q) => sum + q.queued, 0);
    if (total <= max) return;
    queues.sort((a, b) => b.queued - a.queued);
    for (const { socket, queued } of queues) {
      if (total <= max) break;
      this.#cut(socket, limit, queued);
      total -= queued;
    }
  }

  /** Replaces a connection's estimate by its exact queue. */
  #refresh(socket: QueuedSocket): number {
    const queued = socket.queuedBytes;
    const delta = queued - (this.#seen.get(socket) ?? 0);
    this.#seen.set(socket, queued);
    this.#estimate += delta;
    this.#byClient.get(socket.principal)!.estimate += delta;
    return queued;
  }

  #cut(socket: QueuedSocket, limit: QueueLimit, queued: number): void {
    this.delete(socket);
    socket.cut(limit, queued);
  }
}
