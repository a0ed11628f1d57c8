import type { TalkEvent } from "../core/index.js";
import { ReplayBuffer, replayAgeBound } from "../core/index.js";
import type { CommandReply, SessionLostEvent, WorkerInfo } from "./coordinator.js";
import { InProcessSettingsStore } from "./in-process-settings.js";
import { InProcessOneTimeClaims } from "./one-time-claims.js";
import type { HeldLease, LostLease } from "./lease-keeper.js";

/** What the hub needs from an attached coordinator. */
export interface HubMember {
  readonly workerId: string;
  info(): WorkerInfo;
  /** Applies a command to a session the member owns; `command` is parsed there, as if it came over a wire. */
  deliver(sessionId: string, command: unknown): Promise<CommandReply>;
  /** Applies a worker command (worker-command.ts) addressed to the member, as received. */
  deliverWorker(command: unknown): Promise<CommandReply>;
  /** Whether the member still keeps this session's lease (its lease keeper holds it). */
  holds(sessionId: string): boolean;
  onSessionLost(event: SessionLostEvent): void;
}

interface Lease {
  workerId: string;
  deadline: number;
}

interface SessionStream {
  /** Bounded in events and bytes, created on the first publish (the retention is the publisher's). */
  events: ReplayBuffer<TalkEvent> | undefined;
  lastSeq: number;
  listeners: Set<(event: TalkEvent) => void>;
  /** Set when the session was released or lost: the stream is dropped after it. */
  expiresAt: number | undefined;
}

const SWEEP_MS = 250;
/** How long a lapsed lease is remembered, so a late renewal learns it lapsed (mirrors the Redis tombstone). */
const TOMBSTONE_MS = 600_000;

/** How much of a session's event stream the hub keeps for late subscribers. */
export interface StreamRetention {
  /** Events kept at most. */
  events: number;
  /** Serialized bytes kept at most (default: no byte bound). */
  bytes?: number;
  /** Events older than this go (beyond the newest 100), ms; 0 or absent: no age bound. */
  ageMs?: number;
}

/**
 * The shared state of in-process coordinators: what Redis is to the Redis
 * coordinator. One process normally has one coordinator and one hub; tests
 * attach several coordinators to one hub to exercise cross-worker semantics
 * without Redis.
 */
export class InProcessHub {
  /** Shared settings of the attached workers (coordinator.settings). */
  readonly settings: InProcessSettingsStore;
  /** One-time claims and shared secrets of the attached workers (coordinator.claims). */
  readonly claims = new InProcessOneTimeClaims();
  readonly #members = new Map<string, HubMember>();
  readonly #leases = new Map<string, Lease>();
  readonly #tombstones = new Map<string, number>();
  readonly #streams = new Map<string, SessionStream>();
  #sweepTimer: NodeJS.Timeout | undefined;

  /** `settingsDir`: persist shared settings there, one `<name>.json` each (default: memory only). */
  constructor(options: { settingsDir?: string } = {}) {
    this.settings = new InProcessSettingsStore(options.settingsDir);
  }

  attach(member: HubMember): void {
    this.#members.set(member.workerId, member);
    if (!this.#sweepTimer) {
      this.#sweepTimer = setInterval(() => this.sweep(), SWEEP_MS);
      this.#sweepTimer.unref();
    }
  }

  detach(workerId: string): void {
    this.#members.delete(workerId);
    if (this.#members.size === 0 && this.#sweepTimer) {
      clearInterval(this.#sweepTimer);
      this.#sweepTimer = undefined;
    }
  }

  member(workerId: string): HubMember | undefined {
    return this.#members.get(workerId);
  }

  workers(): WorkerInfo[] {
    return [...this.#members.values()].map((m) => m.info());
  }

  /** Returns the owner: this worker when the claim succeeded, another one when it holds the lease. */
  claim(sessionId: string, workerId: string, ttlSec: number): string {
    const current = this.#live(sessionId);
    if (current && current.workerId !== workerId) return current.workerId;
    this.#tombstones.delete(sessionId);
    this.#leases.set(sessionId, { workerId, deadline: Date.now() + ttlSec * 1000 });
    const stream = this.#streams.get(sessionId);
    if (stream) stream.expiresAt = undefined;
    return workerId;
  }

  renew(workerId: string, leases: HeldLease[]): LostLease[] {
    const lost: LostLease[] = [];
    const now = Date.now();
    for (const { sessionId, ttlSec } of leases) {
      const current = this.#live(sessionId);
      if (current && current.workerId !== workerId) lost.push({ sessionId, reason: "taken" });
      else if (!current && this.#tombstones.has(sessionId)) lost.push({ sessionId, reason: "lapsed" });
      else this.#leases.set(sessionId, { workerId, deadline: now + ttlSec * 1000 });
    }
    return lost;
  }

  release(sessionId: string, workerId: string, retentionMs: number): void {
    const current = this.#leases.get(sessionId);
    if (current?.workerId !== workerId) return;
    this.#leases.delete(sessionId);
    this.#expireStream(sessionId, retentionMs);
  }

  locate(sessionId: string): string | undefined {
    return this.#live(sessionId)?.workerId;
  }

  /** `line`: the event's JSON when the publisher has it (its length bounds the stream in bytes: not serialized again). */
  publish(event: TalkEvent, retention: StreamRetention, line?: string): void {
    let stream = this.#streams.get(event.sessionId);
    if (!stream) {
      stream = { events: undefined, lastSeq: 0, listeners: new Set(), expiresAt: undefined };
      this.#streams.set(event.sessionId, stream);
    }
    if (event.seq <= stream.lastSeq) return; // a re-publish: the stream already has it
    stream.lastSeq = event.seq;
    stream.events ??= new ReplayBuffer<TalkEvent>(
      retention.events,
      retention.bytes,
      replayAgeBound(retention.ageMs),
    );
    stream.events.push(event, (line ?? JSON.stringify(event)).length);
    for (const listener of stream.listeners) listener(event);
  }

  subscribe(sessionId: string, afterSeq: number, listener: (event: TalkEvent) => void): () => void {
    let stream = this.#streams.get(sessionId);
    if (!stream) {
      stream = { events: undefined, lastSeq: 0, listeners: new Set(), expiresAt: undefined };
      this.#streams.set(sessionId, stream);
    }
    for (const event of stream.events?.replay(afterSeq).events ?? []) listener(event);
    stream.listeners.add(listener);
    const owned = stream;
    return () => {
      owned.listeners.delete(listener);
    };
  }

  /** Declares lapsed leases lost, once, to every attached worker. */
  sweep(now = Date.now()): void {
    for (const [sessionId, lease] of this.#leases) {
      if (this.#alive(lease, sessionId, now)) continue;
      this.#leases.delete(sessionId);
      this.#tombstones.set(sessionId, now + TOMBSTONE_MS);
      this.#expireStream(sessionId, 60_000);
      const event: SessionLostEvent = { type: "session-lost", sessionId, workerId: lease.workerId, at: now };
      for (const member of this.#members.values()) member.onSessionLost(event);
    }
    for (const [sessionId, until] of this.#tombstones) if (until <= now) this.#tombstones.delete(sessionId);
    for (const [sessionId, stream] of this.#streams) {
      if (stream.expiresAt !== undefined && stream.expiresAt <= now && stream.listeners.size === 0) {
        this.#streams.delete(sessionId);
      }
    }
  }

  #live(sessionId: string): Lease | undefined {
    const lease = this.#leases.get(sessionId);
    return lease && this.#alive(lease, sessionId, Date.now()) ? lease : undefined;
  }

  /**
   * A lease lives while its owner is attached and keeps it, whatever the
   * clock says: the hub and its members share one process and one event
   * loop, so a renewal that came late means the loop was starved (a busy
   * CPU, a long synchronous task), never that the owner died; judging it by
   * the wall-clock TTL made a lone worker declare its own sessions lost
   * (owner_lost) after every stall longer than the TTL. The deadline decides
   * only once the owner detached without releasing (a crash) or stopped
   * keeping the lease.
   */
  #alive(lease: Lease, sessionId: string, now: number): boolean {
    if (lease.deadline > now) return true;
    return this.#members.get(lease.workerId)?.holds(sessionId) ?? false;
  }

  #expireStream(sessionId: string, retentionMs: number): void {
    const stream = this.#streams.get(sessionId);
    if (stream) stream.expiresAt = Date.now() + retentionMs;
  }
}
