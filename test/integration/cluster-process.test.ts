import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { nextEvent } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

const CHILD = new URL("../support/cluster-child.ts", import.meta.url).pathname;

describe("a worker process killed with SIGKILL", () => {
  const keyPrefix = uniquePrefix("sigkill");
  const children: ChildProcess[] = [];
  const coordinators: RedisCoordinator[] = [];

  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.allSettled(coordinators.splice(0).map((c) => c.close()));
    await deleteKeys(SHARED_REDIS_URL, keyPrefix);
  });

  it("its sessions are reported lost to the other workers within TTL + 1 s", async () => {
    const sid = `s-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", CHILD, SHARED_REDIS_URL, keyPrefix, "child-a", "2", sid],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
      child.once("exit", (code) => reject(new Error(`child exited early (${String(code)})`)));
    });
    const b = new RedisCoordinator({
      redisUrl: SHARED_REDIS_URL,
      keyPrefix,
      workerId: "worker-b",
      leaseTtlSec: 2,
    });
    coordinators.push(b);
    await b.start();
    expect(await b.locate(sid)).toEqual({ workerId: "child-a" });
    expect(await b.sendCommand(sid, { verb: "cancelOutput" })).toEqual({ from: "child-a" });

    const lost = nextEvent(b, "session-lost", 3000, (e) => e.sessionId === sid);
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await lost).toMatchObject({ sessionId: sid, workerId: "child-a" });
    expect(await b.locate(sid)).toBeUndefined();
    await expect(b.sendCommand(sid, { verb: "close" })).rejects.toMatchObject({ code: "session_not_found" });
  });
});
