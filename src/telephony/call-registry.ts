/**
 * The calls of this process, by CallSid, and the stream-socket counts the
 * limits are enforced on (total, not yet started, per remote address).
 * A call tells the registry when it closes; closeAll() closes every call
 * without remote calls (shutdown).
 */
import type { TerminalReason } from "../core/index.js";
import type { CallSession } from "./call-session.js";

export interface ConnectionLimits {
  maxConnections: number;
  maxPendingConnections: number;
  maxConnectionsPerIp: number;
}

export type AdmitResult =
  { ok: true; release: () => void; started: () => void } | { ok: false; reason: string };

export class CallRegistry {
  readonly #calls = new Map<string, CallSession>();
  /** Hash of the stream token that started each call: a reconnect presents the same parameters. */
  readonly #resumeKeys = new Map<string, string>();
  readonly #perIp = new Map<string, number>();
  readonly #limits: ConnectionLimits;
  #connections = 0;
  #pending = 0;

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#calls.size;
  }

  get connections(): number {
    return this.#connections;
  }

  get pending(): number {
    return this.#pending;
  }

  /** Counts a new stream socket, or says which limit refuses it. */
  admit(ip: string): AdmitResult {
    const l = this.#limits;
    if (this.#connections >= l.maxConnections) return { ok: false, reason: "too many calls" };
    if (this.#pending >= l.maxPendingConnections) return { ok: false, reason: "too many unstarted streams" };
    const fromIp = this.#perIp.get(ip) ?? 0;
    if (fromIp >= l.maxConnectionsPerIp) return { ok: false, reason: "too many streams from this address" };
    this.#connections++;
    this.#pending++;
    this.#perIp.set(ip, fromIp + 1);
    let pending = true;
    let released = false;
    const started = (): void => {
      if (pending) this.#pending--;
      pending = false;
    };
    const release = (): void => {
      if (released) return;
      released = true;
      started();
      this.#connections--;
      const n = (this.#perIp.get(ip) ?? 1) - 1;
      if (n <= 0) this.#perIp.delete(ip);
      else this.#perIp.set(ip, n);
    };
    return { ok: true, release, started };
  }

  add(call: CallSession, resumeKey?: string): void {
    this.#calls.set(call.callSid, call);
    if (resumeKey !== undefined) this.#resumeKeys.set(call.callSid, resumeKey);
  }

  get(callSid: string): CallSession | undefined {
    return this.#calls.get(callSid);
  }

  /** A detached call of `callSid` started with the token whose hash is `resumeKey`. */
  resumable(callSid: string, resumeKey: string): CallSession | undefined {
    const call = this.#calls.get(callSid);
    return call?.state === "detached" && this.#resumeKeys.get(callSid) === resumeKey ? call : undefined;
  }

  /** Called by a call once it closed. */
  remove(call: CallSession): void {
    if (this.#calls.get(call.callSid) === call) {
      this.#calls.delete(call.callSid);
      this.#resumeKeys.delete(call.callSid);
    }
  }

  list(): CallSession[] {
    return [...this.#calls.values()];
  }

  async closeAll(reason: TerminalReason): Promise<void> {
    await Promise.allSettled(this.list().map((c) => c.close(reason, 1001)));
  }
}
