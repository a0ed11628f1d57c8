import { InProcessCoordinator } from "../../src/cluster/in-process-coordinator.js";
import { InProcessHub } from "../../src/cluster/in-process-hub.js";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { describeCoordinatorContract } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

describeCoordinatorContract("in-process", () => {
  const hub = new InProcessHub();
  return {
    async create(options) {
      const c = new InProcessCoordinator({ heartbeatMs: 200, ...options, hub });
      await c.start();
      return c;
    },
    async cleanup() {},
  };
});

describeCoordinatorContract("redis", () => {
  const keyPrefix = uniquePrefix("contract");
  return {
    async create(options) {
      const c = new RedisCoordinator({ heartbeatMs: 200, ...options, redisUrl: SHARED_REDIS_URL, keyPrefix });
      await c.start();
      return c;
    },
    async cleanup() {
      await deleteKeys(SHARED_REDIS_URL, keyPrefix);
    },
  };
});
