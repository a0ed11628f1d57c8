/**
 * One WebSocket to the Talk API (docs/api.md): JSON request frames answered
 * by exactly one response each, `talk.event` / `talk.audio` event frames.
 * Browsers cannot set headers on a WebSocket, so a token travels as the
 * `bearer.<token>` subprotocol beside `talkgate`.
 */

/** A refused request: the server's stable error code and message. */
export class TalkRequestError extends Error {
  constructor(error) {
    super(error?.message ?? "request failed");
    this.code = error?.code ?? "internal";
    this.retryable = error?.retryable === true;
    this.details = error?.details;
  }
}

export class TalkSocket {
  /**
   * @param {string} url ws(s)://host/talk
   * @param {{token?: string, onEvent(frame: object): void, onClose(info: {code: number, reason: string}): void}} handlers
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.pending = new Map();
    this.nextId = 1;
    this.ws = undefined;
    this.closedByUs = false;
  }

  /** Opens the socket; rejects when it closes before opening (refused token, server down). */
  open() {
    const protocols = this.handlers.token ? ["talkgate", `bearer.${this.handlers.token}`] : ["talkgate"];
    const ws = new WebSocket(this.url, protocols);
    this.ws = ws;
    return new Promise((resolve, reject) => {
      let opened = false;
      ws.onopen = () => {
        opened = true;
        resolve();
      };
      ws.onmessage = (message) => this.#receive(message.data);
      ws.onclose = (event) => {
        for (const { reject: fail } of this.pending.values())
          fail(new TalkRequestError({ code: "connection_lost", message: "The connection closed." }));
        this.pending.clear();
        if (!opened) {
          reject(new TalkRequestError({ code: "connect_failed", message: `closed with ${event.code}` }));
          return;
        }
        if (!this.closedByUs) this.handlers.onClose({ code: event.code, reason: event.reason });
      };
    });
  }

  get open_() {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  /** Sends a request; resolves with its payload, rejects with a TalkRequestError. */
  request(method, params = {}) {
    if (!this.open_) return Promise.reject(new TalkRequestError({ code: "connection_lost" }));
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  /** Closes on purpose (no onClose callback). */
  close() {
    this.closedByUs = true;
    this.ws?.close(1000, "bye");
  }

  /** Drops the socket as a network failure would look to the page (tests, the "drop" debug hook). */
  drop() {
    this.ws?.close(4000, "dropped");
  }

  #receive(data) {
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (frame.type === "res") {
      const waiter = this.pending.get(frame.id);
      if (!waiter) return;
      this.pending.delete(frame.id);
      if (frame.ok) waiter.resolve(frame.payload);
      else waiter.reject(new TalkRequestError(frame.error));
    } else if (frame.type === "event") {
      this.handlers.onEvent(frame);
    }
  }
}
