import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../../test/support/cluster-redis.js";
import { InProcessOneTimeClaims, RedisOneTimeClaims, type OneTimeClaims } from "./one-time-claims.js";

const prefix = uniquePrefix("claims");
const connections: Redis[] = [];
afterAll(async () => {
  for (const c of connections) c.disconnect();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

/** Two workers' views of one backend. */
function backends(): Array<[string, () => [OneTimeClaims, OneTimeClaims]]> {
  return [
    [
      "in-process",
      () => {
        const shared = new InProcessOneTimeClaims();
        return [shared, shared];
      },
    ],
    [
      "redis",
      () => {
        const a = new Redis(SHARED_REDIS_URL);
        const b = new Redis(SHARED_REDIS_URL);
        connections.push(a, b);
        return [new RedisOneTimeClaims(a, prefix), new RedisOneTimeClaims(b, prefix)];
      },
    ],
  ];
}

describe.each(backends())("one-time claims (%s)", (_name, make) => {
  it("the first claim of a key wins on any worker, later ones lose until it expires", async () => {
    const [a, b] = make();
    const key = `k-${Math.random().toString(36).slice(2)}`;
    expect(await a.claim(key, 300)).toBe(true);
    expect(await b.claim(key, 300)).toBe(false);
    expect(await a.claim(key, 300)).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await b.claim(key, 300)).toBe(true);
  });

  it("concurrent claims of one key: exactly one wins", async () => {
    const [a, b] = make();
    const key = `race-${Math.random().toString(36).slice(2)}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).claim(key, 10_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("every worker gets the same shared secret; another name gets another", async () => {
    const [a, b] = make();
    const name = `s-${Math.random().toString(36).slice(2)}`;
    const [sa, sb] = await Promise.all([a.sharedSecret(name), b.sharedSecret(name)]);
    expect(sa.length).toBe(32);
    expect(sa.equals(sb)).toBe(true);
    expect((await a.sharedSecret(`${name}-2`)).equals(sa)).toBe(false);
  });

  it("refuses bad keys and ttls with invalid_params", async () => {
    const [a] = make();
    await expect(a.claim("has space", 1000)).rejects.toMatchObject({ code: "invalid_params" });
    await expect(a.claim("", 1000)).rejects.toMatchObject({ code: "invalid_params" });
    await expect(a.claim("ok", 0)).rejects.toMatchObject({ code: "invalid_params" });
    await expect(a.claim("ok", 1.5)).rejects.toMatchObject({ code: "invalid_params" });
  });
});

describe("one-time claims (redis, unreachable)", () => {
  it("rejects owner_unreachable while Redis cannot be reached, and retries the secret later", async () => {
    const down = new Redis("redis://127.0.0.1:1", {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    connections.push(down);
    const claims = new RedisOneTimeClaims(down, prefix);
    await expect(claims.claim("k", 1000)).rejects.toMatchObject({ code: "owner_unreachable" });
    await expect(claims.sharedSecret("s")).rejects.toMatchObject({ code: "owner_unreachable" });
    await expect(claims.sharedSecret("s")).rejects.toMatchObject({ code: "owner_unreachable" });
  });
});
