/**
 * One Gateway-owned Talk session over a TalkSocket, kept alive across
 * dropped sockets: a drop reconnects and rejoins with the session's join
 * token and `afterSeq` (the last event seen), within the reconnect grace, so
 * the replay fills exactly what was missed. Events are delivered once each,
 * in seq order: a replayed seq already seen is dropped, a hole is counted.
 */
import { TalkRequestError, TalkSocket } from "./talk-socket.js";

/** The server's default reconnectGraceMs (docs/api.md); the page stops trying after it. */
const RECONNECT_GRACE_MS = 30_000;
const BACKOFF_MS = [100, 250, 500, 1000, 2000];

export class LiveSession {
  /**
   * @param {{url: string, token?: string, onEvent(env: object): void, onAudio(payload: object): void,
   *          onConnection(state: "connected"|"reconnecting"|"lost", detail?: object): void}} options
   */
  constructor(options) {
    this.options = options;
    this.socket = undefined;
    this.sessionId = undefined;
    this.joinToken = undefined;
    /** Highest event seq delivered. */
    this.lastSeq = 0;
    /** Diagnostics (and what the browser tests read). */
    this.stats = { joins: 0, replayed: 0, duplicates: 0, gaps: 0, incompleteReplays: 0, seqs: [] };
    this.closed = false;
    this.reconnecting = undefined;
  }

  /** Opens the socket (rejects when the server refuses it, e.g. a missing token). */
  async connect() {
    this.socket = this.#socket();
    await this.socket.open();
    this.options.onConnection("connected");
  }

  /** talk.session.create; the session's events and audio flow from now on. */
  async create(params) {
    const result = await this.socket.request("talk.session.create", params);
    this.sessionId = result.sessionId;
    this.joinToken = result.joinToken;
    this.lastSeq = 0;
    return result;
  }

  /** A talk.session.* verb of this session. */
  verb(name, params = {}) {
    if (!this.sessionId) return Promise.reject(new TalkRequestError({ code: "session_not_found" }));
    if (this.reconnecting || !this.socket)
      return Promise.reject(new TalkRequestError({ code: "connection_lost" }));
    return this.socket.request(`talk.session.${name}`, { sessionId: this.sessionId, ...params });
  }

  /** Any Talk API method (talk.catalog...). */
  request(method, params) {
    return this.socket.request(method, params);
  }

  get connected() {
    return !this.reconnecting && this.socket?.open_ === true;
  }

  /** Closes the session and the socket. Idempotent. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.sessionId && this.connected) await this.verb("close").catch(() => {});
    this.socket?.close();
  }

  /** Drops the socket as a network failure would (the page then rejoins). */
  drop() {
    this.socket?.drop();
  }

  #socket() {
    return new TalkSocket(this.options.url, {
      token: this.options.token,
      onEvent: (frame) => this.#onFrame(frame),
      onClose: (info) => void this.#reconnect(info),
    });
  }

  #onFrame(frame) {
    if (frame.event === "talk.event") {
      const env = frame.payload;
      if (!env || env.sessionId !== this.sessionId) return;
      if (env.seq <= this.lastSeq) {
        this.stats.duplicates += 1;
        return;
      }
      if (env.seq !== this.lastSeq + 1) this.stats.gaps += 1;
      this.lastSeq = env.seq;
      this.stats.seqs.push(env.seq);
      this.options.onEvent(env);
    } else if (frame.event === "talk.audio") {
      if (frame.payload?.sessionId === this.sessionId) this.options.onAudio(frame.payload);
    }
  }

  async #reconnect(info) {
    if (this.closed || this.reconnecting) return;
    const deadline = Date.now() + RECONNECT_GRACE_MS;
    this.reconnecting = true;
    this.options.onConnection("reconnecting", info);
    for (let attempt = 0; !this.closed && Date.now() < deadline; attempt++) {
      await sleep(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]);
      const socket = this.#socket();
      try {
        await socket.open();
      } catch {
        continue;
      }
      this.socket = socket;
      if (!this.sessionId) {
        this.reconnecting = false;
        this.options.onConnection("connected");
        return;
      }
      try {
        const joined = await socket.request("talk.session.join", {
          sessionId: this.sessionId,
          joinToken: this.joinToken,
          afterSeq: this.lastSeq,
        });
        this.stats.joins += 1;
        this.stats.replayed += joined.replayed;
        if (!joined.complete) this.stats.incompleteReplays += 1;
        this.reconnecting = false;
        this.options.onConnection("connected", { rejoined: true, complete: joined.complete });
        return;
      } catch (err) {
        socket.close();
        // The session is gone (closed, grace over): nothing to rejoin.
        if (err instanceof TalkRequestError && !err.retryable && err.code !== "connection_lost") break;
      }
    }
    this.reconnecting = false;
    this.options.onConnection("lost");
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
