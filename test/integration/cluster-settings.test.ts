import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessCoordinator } from "../../src/cluster/in-process-coordinator.js";
import { InProcessHub } from "../../src/cluster/in-process-hub.js";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { SharedSetting } from "../../src/cluster/shared-setting.js";
import type { Coordinator, SettingRecord } from "../../src/cluster/index.js";
import type { TalkLogger } from "../../src/core/logger.js";
import { eventually } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { recordingLogger } from "../../src/core/testing/recording-logger.js";

interface Backend {
  name: string;
  /** A started worker sharing settings with the others of the test. */
  worker(logger?: TalkLogger): Promise<Coordinator>;
  cleanup(): Promise<void>;
}

function inProcess(): Backend {
  const hub = new InProcessHub();
  const workers: Coordinator[] = [];
  return {
    name: "in-process",
    async worker(logger) {
      const c = new InProcessCoordinator({ hub, ...(logger ? { logger } : {}) });
      await c.start();
      workers.push(c);
      return c;
    },
    async cleanup() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

function redis(keyPrefix = uniquePrefix("settings")): Backend & { keyPrefix: string } {
  const workers: Coordinator[] = [];
  return {
    name: "redis",
    keyPrefix,
    async worker(logger) {
      const c = new RedisCoordinator({
        redisUrl: SHARED_REDIS_URL,
        keyPrefix,
        ...(logger ? { logger } : {}),
      });
      await c.start();
      workers.push(c);
      return c;
    },
    async cleanup() {
      await Promise.all(workers.map((w) => w.close()));
      await deleteKeys(SHARED_REDIS_URL, keyPrefix);
    },
  };
}

const backends: (() => Backend)[] = [inProcess, () => redis()];
for (const make of backends) {
  describe(`shared settings: ${make().name}`, () => {
    let backend: Backend;
    afterEach(async () => {
      await backend?.cleanup();
    });

    it("a write on one worker is read on another, and every worker's listeners hear it exactly once, in revision order", async () => {
      backend = make();
      const [a, b] = [await backend.worker(), await backend.worker()];
      const heard: Record<string, [string, SettingRecord][]> = { a: [], b: [] };
      a.settings.onChange((name, record) => heard["a"]!.push([name, record]));
      b.settings.onChange((name, record) => heard["b"]!.push([name, record]));
      expect(await b.settings.read("greeting")).toBeUndefined();

      const first = await a.settings.write("greeting", { text: "hello" });
      // The writer's listeners have it when write resolves.
      expect(heard["a"]).toEqual([["greeting", first]]);
      expect(await b.settings.read("greeting")).toEqual(first);
      const second = await b.settings.write("greeting", { text: "hi" });
      expect(second.revision).toBeGreaterThan(first.revision);
      await eventually(
        () => heard["a"]!.length === 2 && heard["b"]!.length === 2,
        5000,
        "both changes on both",
      );
      // Give a duplicate (the writer's own change coming back) time to show up, then check there was none.
      await a.settings.write("other", 1);
      await eventually(() => heard["b"]!.some(([n]) => n === "other"), 5000, "a later change");
      for (const worker of ["a", "b"]) {
        expect(heard[worker]!.filter(([n]) => n === "greeting")).toEqual([
          ["greeting", first],
          ["greeting", second],
        ]);
      }
    });

    it("concurrent writes on two workers converge on the same value everywhere", async () => {
      backend = make();
      const [a, b] = [await backend.worker(), await backend.worker()];
      const onA = await SharedSetting.open(a.settings, { name: "mode", defaults: "none", parse: String });
      const onB = await SharedSetting.open(b.settings, { name: "mode", defaults: "none", parse: String });
      await Promise.all([onA.set("from-a"), onB.set("from-b")]);
      const stored = await a.settings.read("mode");
      await eventually(() => onA.value === stored!.value && onB.value === stored!.value, 5000, "convergence");
      expect(onA.revision).toBe(stored!.revision);
      expect(onB.revision).toBe(stored!.revision);
    });

    it("a worker started later reads the stored value; bad names and values are invalid_params", async () => {
      backend = make();
      const a = await backend.worker();
      await a.settings.write("limits", { max: 3 });
      const late = await backend.worker();
      const setting = await SharedSetting.open(late.settings, {
        name: "limits",
        defaults: { max: 1 },
        parse: (v) => v as { max: number },
      });
      expect(setting.value).toEqual({ max: 3 });
      await expect(a.settings.write("Bad Name", 1)).rejects.toMatchObject({ code: "invalid_params" });
      await expect(a.settings.read("../etc")).rejects.toMatchObject({ code: "invalid_params" });
      await expect(a.settings.write("limits", 10n)).rejects.toMatchObject({ code: "invalid_params" });
      await expect(a.settings.write("limits", undefined)).rejects.toMatchObject({ code: "invalid_params" });
      await expect(a.settings.write("limits", "x".repeat(70_000))).rejects.toMatchObject({
        code: "invalid_params",
      });
    });
  });
}

describe("shared settings: bad data in Redis", () => {
  let backend: ReturnType<typeof redis>;
  let raw: Redis;
  afterEach(async () => {
    raw?.disconnect();
    await backend?.cleanup();
  });

  it("corrupt JSON or a bad revision in the stored hash is a warning and the defaults, never a crash; a later write repairs it", async () => {
    backend = redis();
    raw = new Redis(SHARED_REDIS_URL);
    await raw.hset(`${backend.keyPrefix}setting:triggers`, { revision: "4", value: "{not json" });
    await raw.hset(`${backend.keyPrefix}setting:norev`, { revision: "many", value: "[1]" });
    const logger = recordingLogger();
    const worker = await backend.worker(logger);
    expect(await worker.settings.read("triggers")).toBeUndefined();
    expect(await worker.settings.read("norev")).toBeUndefined();
    expect(logger.warnings).toEqual([
      "stored setting is not valid JSON; ignored",
      "stored setting has no valid revision; ignored",
    ]);
    const setting = await SharedSetting.open(worker.settings, {
      name: "triggers",
      defaults: ["computer"],
      parse: (v) => {
        if (!Array.isArray(v)) throw new Error("not a list");
        return v as string[];
      },
      logger,
    });
    expect(setting.value).toEqual(["computer"]);
    // A value that is JSON but not what the setting expects: also the defaults, with a warning.
    await raw.hset(`${backend.keyPrefix}setting:triggers`, { value: '{"x":1}' });
    const other = await backend.worker(logger);
    const again = await SharedSetting.open(other.settings, {
      name: "triggers",
      defaults: ["computer"],
      parse: (v) => {
        if (!Array.isArray(v)) throw new Error("not a list");
        return v as string[];
      },
      logger,
    });
    expect(again.value).toEqual(["computer"]);
    expect(logger.warnings).toContain("stored setting is invalid; using the defaults");
    await setting.set(["jarvis"]);
    await eventually(() => again.value[0] === "jarvis", 5000, "the repaired value on the other worker");
    expect(await other.settings.read("triggers")).toEqual({ revision: 5, value: ["jarvis"] });
  });

  it("a malformed announcement on the channel is a warning and changes nothing", async () => {
    backend = redis();
    raw = new Redis(SHARED_REDIS_URL);
    const logger = recordingLogger();
    const worker = await backend.worker(logger);
    const heard: string[] = [];
    worker.settings.onChange((name) => heard.push(name));
    await raw.publish(`${backend.keyPrefix}settings`, "{broken");
    await raw.publish(`${backend.keyPrefix}settings`, JSON.stringify({ name: "x", revision: "1", value: 1 }));
    await raw.publish(`${backend.keyPrefix}settings`, "null");
    await eventually(() => logger.warnings.length === 3, 5000, "three warnings");
    expect(logger.warnings.every((w) => w === "malformed setting change ignored")).toBe(true);
    expect(heard).toEqual([]);
  });
});
