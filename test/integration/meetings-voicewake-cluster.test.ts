import { existsSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import type { VoiceWakeState } from "../../src/meetings/index.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { connectTalk, startMeetingsHarness, type MeetingsHarness } from "./meetings-harness.js";

const ADMIN = "admin-token-0123456789";

/**
 * voicewake across workers: two whole apps in this process on the local
 * Redis (one key prefix), each with its own data directory, as two
 * `talkgate serve` processes would be. No browser.
 */
describe("voicewake triggers shared by every worker (Redis)", () => {
  const prefix = uniquePrefix("voicewake");
  const prefixes = [prefix];
  const harnesses: MeetingsHarness[] = [];
  const sockets: WebSocket[] = [];
  let a: MeetingsHarness;
  let b: MeetingsHarness;

  const worker = async (workerId: string, keyPrefix = prefix): Promise<MeetingsHarness> => {
    const h = await startMeetingsHarness(
      { wakeTriggers: ["computer"] },
      {
        redis: { url: SHARED_REDIS_URL, keyPrefix },
        cluster: { workerId, roles: ["api"] },
        auth: { tokens: [{ name: "admin", token: ADMIN, scopes: ["admin"] }] },
      },
    );
    harnesses.push(h);
    return h;
  };

  beforeAll(async () => {
    [a, b] = await Promise.all([worker("voicewake-a"), worker("voicewake-b")]);
  }, 30_000);

  afterAll(async () => {
    for (const s of sockets) s.close();
    await Promise.all(harnesses.map((h) => h.close()));
    for (const p of prefixes) await deleteKeys(SHARED_REDIS_URL, p);
  }, 30_000);

  const connect = (h: MeetingsHarness) => connectTalk(h.baseUrl, ADMIN, sockets);

  it("set on A: B answers it on voicewake.get, B's bots follow it at once, and each worker's clients get voicewake.changed exactly once", async () => {
    const onA = await connect(a);
    const onB = await connect(b);
    expect((await onB.call("voicewake.get")).payload.triggers).toEqual(["computer"]);
    // What B's bots read: app.voiceWake.get() on every caption, and its change listener.
    const heardByBotSide: VoiceWakeState[] = [];
    b.app.voiceWake.onChange((state) => heardByBotSide.push(state));

    const set = await onA.call("voicewake.set", { triggers: ["hey talkgate", "jarvis"] });
    expect(set.error).toBeUndefined();
    expect(set.payload.triggers).toEqual(["hey talkgate", "jarvis"]);

    await expect.poll(() => heardByBotSide.length).toBe(1);
    expect(heardByBotSide[0]).toEqual(set.payload);
    expect(b.app.voiceWake.get()).toEqual(set.payload);
    expect((await onB.call("voicewake.get")).payload).toEqual(set.payload);
    for (const client of [onA, onB]) {
      await expect.poll(() => client.events.filter((e) => e.event === "voicewake.changed").length).toBe(1);
    }
    // A later change shows nothing was still on its way: still one event per change per client.
    await onB.call("voicewake.set", { triggers: ["computer"] });
    for (const client of [onA, onB]) {
      await expect.poll(() => client.events.filter((e) => e.event === "voicewake.changed").length).toBe(2);
      expect(
        client.events.filter((e) => e.event === "voicewake.changed").map((e) => e.payload.triggers),
      ).toEqual([["hey talkgate", "jarvis"], ["computer"]]);
    }
    expect(heardByBotSide.map((s) => s.triggers)).toEqual([["hey talkgate", "jarvis"], ["computer"]]);
    // Redis is the source of truth here: no worker wrote a settings file.
    for (const h of [a, b]) expect(existsSync(join(h.dir, "data", "settings", "voicewake.json"))).toBe(false);
  });

  it("a worker started later reads the stored triggers", async () => {
    const onA = await connect(a);
    await onA.call("voicewake.set", { triggers: ["late reader"] });
    const c = await worker("voicewake-c");
    expect(c.app.voiceWake.get().triggers).toEqual(["late reader"]);
    expect((await (await connect(c)).call("voicewake.get")).payload.triggers).toEqual(["late reader"]);
  }, 30_000);

  it("corrupt JSON stored in Redis: the worker starts with the configured triggers and a set repairs it", async () => {
    const other = uniquePrefix("voicewake-bad");
    prefixes.push(other);
    const raw = new Redis(SHARED_REDIS_URL);
    try {
      await raw.hset(`${other}setting:voicewake`, { revision: "1", value: "{not json" });
      const d = await worker("voicewake-d", other);
      expect(d.app.voiceWake.get()).toEqual({ triggers: ["computer"], updatedAtMs: 0 });
      const client = await connect(d);
      expect((await client.call("voicewake.set", { triggers: ["repaired"] })).payload.triggers).toEqual([
        "repaired",
      ]);
      expect(JSON.parse((await raw.hget(`${other}setting:voicewake`, "value"))!).triggers).toEqual([
        "repaired",
      ]);
    } finally {
      raw.disconnect();
    }
  }, 30_000);
});
