import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type {
  PlaybackPosition,
  SessionCreateResult,
  TalkAudioPayload,
  TalkMethod,
  TalkParams,
  TalkResult,
} from "../gateway/index.js";
import type { TalkClient } from "./talk-client.js";

/** A `talk.session.*` verb of one session (the link adds the sessionId). */
type SessionMethod = Exclude<
  Extract<TalkMethod, `talk.session.${string}`>,
  "talk.session.create" | "talk.session.join"
>;
type VerbName = SessionMethod extends `talk.session.${infer V}` ? V : never;
type VerbParams<V extends VerbName> = Omit<TalkParams<`talk.session.${V}`>, "sessionId">;

export type LinkState = "connected" | "reconnecting" | "lost";

export interface SessionLinkOptions {
  /** Opens a new connection (the first, and each reconnect). */
  connect(): Promise<TalkClient>;
  /** Each of the session's events, once, in seq order (a replayed seq already delivered is dropped). */
  onEvent(event: TalkEvent): void;
  onAudio?(audio: TalkAudioPayload): void;
  /** The connection's state: `lost` when it could not rejoin within the grace (the link is then closed). */
  onState?(state: LinkState, detail?: { rejoined?: boolean; complete?: boolean; code?: number }): void;
  /** How long to keep trying to rejoin, ms. Default 30 000 (the server's default reconnectGraceMs). */
  reconnectGraceMs?: number;
  /** Waits between attempts, ms (the last repeats). */
  backoffMs?: readonly number[];
}

/** What a link has seen; for diagnostics and tests. */
export interface SessionLinkStats {
  joins: number;
  replayed: number;
  duplicates: number;
  gaps: number;
  incompleteReplays: number;
}

const DEFAULT_BACKOFF_MS = [100, 250, 500, 1000, 2000];

/**
 * One Gateway-owned Talk session kept alive across dropped connections: a
 * drop reconnects and rejoins with the session's join token and `afterSeq`
 * (the last event delivered), within the reconnect grace, so the replay fills
 * exactly what was missed. Events are delivered once each, in seq order: a
 * replayed seq already delivered is dropped, a hole is counted.
 */
export class SessionLink {
  readonly #options: SessionLinkOptions;
  #client: TalkClient | undefined;
  #offClient: (() => void)[] = [];
  #sessionId: string | undefined;
  #joinToken: string | undefined;
  #lastSeq = 0;
  #reconnecting = false;
  #closed = false;
  #playback: PlaybackPosition | undefined;
  /**
   * Events that arrived while `create` was answered and not yet read: the
   * server sends the first ones right after its response, and a socket may
   * hand both over before the response's promise continuation runs.
   */
  #early: TalkEvent[] | undefined;
  readonly stats: SessionLinkStats = { joins: 0, replayed: 0, duplicates: 0, gaps: 0, incompleteReplays: 0 };

  constructor(options: SessionLinkOptions) {
    this.#options = options;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Highest event seq delivered. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  get connected(): boolean {
    return !this.#reconnecting && this.#client !== undefined && !this.#client.closed;
  }

  /** Opens the first connection (rejects with the server's refusal, e.g. `unauthorized`). */
  async connect(): Promise<void> {
    this.#attach(await this.#options.connect());
    this.#options.onState?.("connected");
  }

  /** `talk.session.create`; the session's events and audio flow from now on. */
  async create(params: TalkParams<"talk.session.create">): Promise<SessionCreateResult> {
    const early: TalkEvent[] = [];
    this.#early = early;
    let result: SessionCreateResult;
    try {
      result = await this.#current().request("talk.session.create", params);
    } finally {
      this.#early = undefined;
    }
    this.#sessionId = result.sessionId;
    this.#joinToken = result.joinToken;
    this.#lastSeq = 0;
    this.#playback = undefined;
    for (const event of early) this.#onEvent(event);
    return result;
  }

  /** Any Talk API method on the current connection (`talk.catalog`...). */
  request<M extends TalkMethod>(method: M, params: TalkParams<M>): Promise<TalkResult<M>> {
    return (this.#current().request as (m: M, p: TalkParams<M>) => Promise<TalkResult<M>>)(method, params);
  }

  /** A verb of this session: `appendAudio`, `startTurn`, `cancelOutput`... (its sessionId added). */
  verb<V extends VerbName>(name: V, params?: VerbParams<V>): Promise<TalkResult<`talk.session.${V}`>> {
    if (!this.#sessionId) return Promise.reject(new TalkError("session_not_found", "No session yet."));
    if (this.#reconnecting)
      return Promise.reject(new TalkError("cancelled", "The connection is down; rejoining the session."));
    // Through the typed path, which adds the reported playback position to the verbs that carry it.
    let client: TalkClient;
    try {
      client = this.#current();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const request = client.request as (method: string, params: unknown) => Promise<unknown>;
    return request.call(client, `talk.session.${name}`, {
      ...params,
      sessionId: this.#sessionId,
    }) as Promise<TalkResult<`talk.session.${V}`>>;
  }

  /**
   * What the app's speaker has played of the session's assistant audio (see
   * TalkClient.reportPlayback): sent with the next verb that carries it, and
   * again on the connection a rejoin opens.
   */
  reportPlayback(position: PlaybackPosition): void {
    this.#playback = { ...position };
    if (this.#sessionId) this.#client?.reportPlayback(this.#sessionId, position);
  }

  /** Closes the session (when connected) and the connection. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    const client = this.#client;
    if (this.#sessionId && this.connected) await this.verb("close").catch(() => undefined);
    this.#closed = true;
    this.#detach();
    await client?.close().catch(() => undefined);
  }

  /** Drops the connection as a network failure would (the link then rejoins): for tests and debugging. */
  drop(): void {
    void this.#client?.close(4000, "dropped");
  }

  #current(): TalkClient {
    if (!this.#client || this.#closed) throw new TalkError("cancelled", "The session link is closed.");
    return this.#client;
  }

  #attach(client: TalkClient): void {
    this.#detach();
    this.#client = client;
    this.#offClient = [
      client.on("talk.event", (event) => this.#onEvent(event)),
      client.on("talk.audio", (audio) => {
        if (audio.sessionId === this.#sessionId) this.#options.onAudio?.(audio);
      }),
      client.on("close", (info) => void this.#reconnect(client, info.code)),
    ];
  }

  #detach(): void {
    for (const off of this.#offClient) off();
    this.#offClient = [];
  }

  #onEvent(event: TalkEvent): void {
    if (event.sessionId !== this.#sessionId) {
      if (this.#early && this.#early.length < 1000) this.#early.push(event);
      return;
    }
    if (event.seq <= this.#lastSeq) {
      this.stats.duplicates += 1;
      return;
    }
    if (event.seq !== this.#lastSeq + 1) this.stats.gaps += 1;
    this.#lastSeq = event.seq;
    this.#options.onEvent(event);
  }

  async #reconnect(dropped: TalkClient, code: number): Promise<void> {
    if (this.#closed || this.#reconnecting || dropped !== this.#client) return;
    const { onState } = this.#options;
    const backoff = this.#options.backoffMs ?? DEFAULT_BACKOFF_MS;
    const deadline = Date.now() + (this.#options.reconnectGraceMs ?? 30_000);
    this.#reconnecting = true;
    onState?.("reconnecting", { code });
    for (let attempt = 0; !this.#closed && Date.now() < deadline; attempt++) {
      await sleep(backoff[Math.min(attempt, backoff.length - 1)] ?? 1000);
      let client: TalkClient;
      try {
        client = await this.#options.connect();
      } catch {
        continue;
      }
      if (this.#closed) {
        await client.close();
        return;
      }
      if (!this.#sessionId || !this.#joinToken) {
        this.#attach(client);
        this.#reconnecting = false;
        onState?.("connected");
        return;
      }
      // Attached before the join, so the replay that follows its answer is delivered (and deduplicated).
      this.#attach(client);
      try {
        const joined = await client.request("talk.session.join", {
          sessionId: this.#sessionId,
          joinToken: this.#joinToken,
          afterSeq: this.#lastSeq,
        });
        this.stats.joins += 1;
        this.stats.replayed += joined.replayed;
        if (this.#playback) client.reportPlayback(this.#sessionId, this.#playback);
        if (!joined.complete) this.stats.incompleteReplays += 1;
        this.#reconnecting = false;
        onState?.("connected", { rejoined: true, complete: joined.complete });
        return;
      } catch (err) {
        this.#detach();
        await client.close().catch(() => undefined);
        // The session is gone (closed, grace over, token revoked): nothing to rejoin.
        if (err instanceof TalkError && !err.retryable && err.code !== "cancelled") break;
      }
    }
    this.#reconnecting = false;
    if (this.#closed) return;
    this.#closed = true;
    onState?.("lost");
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
