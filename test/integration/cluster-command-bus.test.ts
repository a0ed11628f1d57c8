import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { CommandBus } from "../../src/cluster/command-bus.js";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { createRedisConnection, parseRedisUrl, RedisKeys } from "../../src/cluster/redis-connection.js";
import type { TalkError } from "../../src/core/errors.js";
import type { TalkLogger } from "../../src/core/logger.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { recordingLogger } from "../../src/core/testing/recording-logger.js";

/**
 * The Redis command bus as a worker meets it: a real owner (RedisCoordinator)
 * behind real pub/sub, probed with raw messages nobody well-behaved would send,
 * and a caller bus whose waits are released by the caller's signal.
 */

const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function owner(keyPrefix: string, logger: TalkLogger): Promise<RedisCoordinator> {
  const c = new RedisCoordinator({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId: "owner", logger });
  await c.start();
  cleanups.push(() => c.close());
  return c;
}

/** A caller's bus, on its own connections, as a RedisCoordinator builds it. */
async function callerBus(keyPrefix: string, workerId: string): Promise<CommandBus> {
  const base = parseRedisUrl(SHARED_REDIS_URL);
  const commands = createRedisConnection(base, "commands", `${workerId}-cmd`);
  const subscriber = createRedisConnection(base, "subscriber", `${workerId}-sub`);
  await Promise.all([commands.connect(), subscriber.connect()]);
  const bus = new CommandBus({
    commands,
    subscriber,
    keys: new RedisKeys(keyPrefix),
    workerId,
    apply: () => Promise.resolve({ ok: false, error: { code: "session_not_found", message: "none here" } }),
    applyWorker: () =>
      Promise.resolve({ ok: false, error: { code: "capability_unsupported", message: "none here" } }),
    logger: recordingLogger(),
  });
  await bus.start();
  cleanups.push(() => {
    bus.close();
    commands.disconnect();
    subscriber.disconnect();
  });
  return bus;
}

/** A raw client that publishes what it likes and hears the replies sent to `replyTo`. */
async function probe(keyPrefix: string, replyTo: string) {
  const keys = new RedisKeys(keyPrefix);
  const pub = new Redis(SHARED_REDIS_URL);
  const sub = new Redis(SHARED_REDIS_URL);
  cleanups.push(() => {
    pub.disconnect();
    sub.disconnect();
  });
  const replies: unknown[] = [];
  sub.on("message", (_channel: string, message: string) => replies.push(JSON.parse(message)));
  await sub.subscribe(keys.replyChannel(replyTo));
  return {
    replies,
    send: (raw: string) => pub.publish(keys.commandChannel("owner"), raw),
    async reply(id: string): Promise<unknown> {
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        const found = replies.find((r) => (r as { id?: unknown }).id === id);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no reply to ${id}`);
    },
  };
}

describe("cluster command bus (redis)", () => {
  it("answers a malformed session command with a coded error, logs it, and keeps serving", async () => {
    const keyPrefix = uniquePrefix("bus");
    cleanups.push(() => deleteKeys(SHARED_REDIS_URL, keyPrefix));
    const logger = recordingLogger();
    const a = await owner(keyPrefix, logger);
    const sid = `s-${randomUUID()}`;
    await a.claim(sid);
    const applied: unknown[] = [];
    a.onCommand((_sessionId, command) => {
      applied.push(command);
      return { sessionId: sid, cancelled: true };
    });
    const p = await probe(keyPrefix, "probe");

    expect(await p.send("{not json")).toBe(1);
    await p.send(JSON.stringify({ id: "m-envelope", replyTo: "probe", sessionId: 42 }));
    await p.send(
      JSON.stringify({ id: "m-verb", replyTo: "probe", sessionId: sid, command: { verb: "explode" } }),
    );
    await p.send(
      JSON.stringify({
        id: "m-params",
        replyTo: "probe",
        sessionId: sid,
        command: { verb: "cancelTurn", params: { turnId: 7, peer: "w/c" } },
      }),
    );
    await p.send(
      JSON.stringify({
        id: "m-extra",
        replyTo: "probe",
        sessionId: sid,
        command: { verb: "close", params: { reason: "client_request", sudo: true } },
      }),
    );

    expect(await p.reply("m-envelope")).toMatchObject({
      reply: { ok: false, error: { code: "invalid_request", message: expect.stringContaining("sessionId") } },
    });
    expect(await p.reply("m-verb")).toMatchObject({
      reply: { ok: false, error: { code: "invalid_params", message: expect.stringContaining("explode") } },
    });
    expect(await p.reply("m-params")).toMatchObject({
      reply: { ok: false, error: { code: "invalid_params", message: expect.stringContaining("turnId") } },
    });
    expect(await p.reply("m-extra")).toMatchObject({
      reply: { ok: false, error: { code: "invalid_params", message: expect.stringContaining("sudo") } },
    });
    expect(applied).toEqual([]);
    expect(logger.warnings.filter((w) => w.startsWith("malformed"))).toHaveLength(5);

    // The owner still serves well-formed commands, from a probe and from another worker.
    await p.send(
      JSON.stringify({
        id: "m-good",
        replyTo: "probe",
        sessionId: sid,
        command: { verb: "cancelOutput", params: { reason: "barge_in" } },
      }),
    );
    expect(await p.reply("m-good")).toEqual({
      id: "m-good",
      reply: { ok: true, value: { sessionId: sid, cancelled: true } },
    });
    const b = await callerBus(keyPrefix, "caller");
    expect(await b.send("owner", sid, { verb: "cancelTurn", params: { turnId: "t1" } }, 2000)).toEqual({
      ok: true,
      value: { sessionId: sid, cancelled: true },
    });
    expect(applied).toEqual([
      { verb: "cancelOutput", params: { reason: "barge_in" } },
      { verb: "cancelTurn", params: { turnId: "t1" } },
    ]);
  });

  it("a caller whose signal aborts stops waiting at once (cancelled) and its pending entry is released", async () => {
    const keyPrefix = uniquePrefix("bus");
    cleanups.push(() => deleteKeys(SHARED_REDIS_URL, keyPrefix));
    const a = await owner(keyPrefix, recordingLogger());
    const sid = `s-${randomUUID()}`;
    await a.claim(sid);
    let heard = 0;
    a.onCommand(() => {
      heard += 1;
      return new Promise(() => {}); // an owner that never answers
    });
    const b = await callerBus(keyPrefix, "caller");

    const controller = new AbortController();
    const started = Date.now();
    const sent = b.send("owner", sid, { verb: "close", params: {} }, 30_000, controller.signal);
    const settled = sent.then(
      () => undefined,
      (err: TalkError) => err,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(b.pending).toBe(1);
    controller.abort(new Error("the client went away"));
    const err = await settled;
    expect(err?.code).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(b.pending).toBe(0);
    expect(heard).toBe(1);

    // A signal aborted before the send: nothing is published, nothing waits.
    const err2 = await b.send("owner", sid, { verb: "close", params: {} }, 30_000, AbortSignal.abort()).then(
      () => undefined,
      (e: TalkError) => e,
    );
    expect(err2?.code).toBe("cancelled");
    expect(b.pending).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toBe(1);
  });
});
