// A worker in its own process for tests that kill it: claims the sessions
// named on the command line, prints "ready", then waits to be killed.
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";

const [redisUrl, keyPrefix, workerId, ttl, ...sessions] = process.argv.slice(2);
const coordinator = new RedisCoordinator({
  redisUrl: redisUrl ?? "",
  keyPrefix: keyPrefix ?? "",
  workerId: workerId ?? "child",
  leaseTtlSec: Number(ttl ?? "2"),
});
await coordinator.start();
coordinator.onCommand(() => ({ from: workerId }));
for (const sessionId of sessions) await coordinator.claim(sessionId);
process.stdout.write("ready\n");
setInterval(() => {}, 1000);
