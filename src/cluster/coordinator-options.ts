import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";
import type { WorkerRole } from "./coordinator.js";

/** Options shared by both coordinator implementations. */
export interface CoordinatorOptions {
  /** Unique id of this worker (default `<hostname>-<pid>-<random>`). Letters, digits, `.`, `_`, `-`, `:`. */
  workerId?: string;
  /** Roles this worker runs (default ["media"]). */
  roles?: readonly WorkerRole[];
  /** Default session lease TTL in seconds (default 10). Renewed every TTL/3. */
  leaseTtlSec?: number;
  /** Sessions this worker accepts before placement treats it as full (default 10 000). */
  maxSessions?: number;
  /** Worker registry heartbeat, ms (default 2000); a worker is gone after 3 missed beats. */
  heartbeatMs?: number;
  /** How often lapsed leases are looked for, ms (default min(1000, TTL·1000/4)). */
  sweepIntervalMs?: number;
  /** Default bounded wait of sendCommand, ms (default 2000). */
  commandTimeoutMs?: number;
  /** Events kept per session for replay to late or reconnecting subscribers (default 1000). */
  eventRetention?: number;
  /** Serialized bytes of events kept per session for replay besides eventRetention (default 1 MiB; in-process hub). */
  eventRetentionBytes?: number;
  /** Events older than this leave the in-process hub's ring beyond its newest 100, ms; 0: no age bound (default 0). */
  eventRetentionAgeMs?: number;
  /** How long a released or lost session's events stay readable, ms (default 60 000). */
  closedRetentionMs?: number;
  logger?: TalkLogger;
}

export type ResolvedCoordinatorOptions = Required<CoordinatorOptions>;

const DEFAULTS = Object.freeze({
  roles: Object.freeze(["media"]) as readonly WorkerRole[],
  leaseTtlSec: 10,
  maxSessions: 10_000,
  heartbeatMs: 2000,
  commandTimeoutMs: 2000,
  eventRetention: 1000,
  eventRetentionBytes: 1024 * 1024,
  eventRetentionAgeMs: 0,
  closedRetentionMs: 60_000,
});

const WORKER_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function nonNegativeInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new TalkError(
      "config_invalid",
      `cluster: ${name} must be a non-negative integer, got ${String(value)}.`,
    );
  }
  return value;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new TalkError(
      "config_invalid",
      `cluster: ${name} must be a positive integer, got ${String(value)}.`,
    );
  }
  return value;
}

export function defaultWorkerId(): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .slice(0, 64)}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

export function resolveCoordinatorOptions(options: CoordinatorOptions): ResolvedCoordinatorOptions {
  const workerId = options.workerId ?? defaultWorkerId();
  if (!WORKER_ID.test(workerId)) {
    throw new TalkError(
      "config_invalid",
      `cluster: workerId ${JSON.stringify(workerId)} must match ${String(WORKER_ID)}.`,
    );
  }
  const roles = options.roles ?? DEFAULTS.roles;
  if (roles.length === 0 || roles.some((r) => typeof r !== "string" || r.length === 0)) {
    throw new TalkError("config_invalid", "cluster: roles must be a non-empty list of names.");
  }
  const leaseTtlSec = positiveInt("leaseTtlSec", options.leaseTtlSec ?? DEFAULTS.leaseTtlSec);
  return {
    workerId,
    roles: Object.freeze([...new Set(roles)]),
    leaseTtlSec,
    maxSessions: positiveInt("maxSessions", options.maxSessions ?? DEFAULTS.maxSessions),
    heartbeatMs: positiveInt("heartbeatMs", options.heartbeatMs ?? DEFAULTS.heartbeatMs),
    sweepIntervalMs: positiveInt(
      "sweepIntervalMs",
      options.sweepIntervalMs ?? Math.min(1000, Math.floor((leaseTtlSec * 1000) / 4)),
    ),
    commandTimeoutMs: positiveInt("commandTimeoutMs", options.commandTimeoutMs ?? DEFAULTS.commandTimeoutMs),
    eventRetention: positiveInt("eventRetention", options.eventRetention ?? DEFAULTS.eventRetention),
    eventRetentionBytes: positiveInt(
      "eventRetentionBytes",
      options.eventRetentionBytes ?? DEFAULTS.eventRetentionBytes,
    ),
    eventRetentionAgeMs: nonNegativeInt(
      "eventRetentionAgeMs",
      options.eventRetentionAgeMs ?? DEFAULTS.eventRetentionAgeMs,
    ),
    closedRetentionMs: positiveInt(
      "closedRetentionMs",
      options.closedRetentionMs ?? DEFAULTS.closedRetentionMs,
    ),
    logger: options.logger ?? NOOP_LOGGER,
  };
}

/** Lease renewal period for a TTL: a third of it, so two renewals can fail before it lapses. */
export function renewIntervalMs(ttlSec: number): number {
  return Math.max(100, Math.floor((ttlSec * 1000) / 3));
}
