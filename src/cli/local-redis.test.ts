import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { TalkError } from "../core/index.js";
import { startLocalRedis } from "./local-redis.js";

const logger = { info: () => {}, warn: () => {} };

/** What the server first answers `command` on a fresh connection that has not authenticated. */
function rawReply(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(command));
    socket.once("data", (d) => {
      resolve(d.toString());
      socket.destroy();
    });
    socket.once("error", reject);
  });
}

/** The redis-server the watchdog runs (its only child), from /proc. */
function serverUnder(watchdog: number): { pid: number; cmdline: string; confDir: string } {
  const children = readFileSync(`/proc/${watchdog}/task/${watchdog}/children`, "utf8").trim().split(/\s+/);
  const pid = Number(children[0]);
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  return {
    pid,
    cmdline,
    confDir: readFileSync(`/proc/${pid}/cwd/redis.conf`, "utf8").match(/^dir "(.*)"$/m)![1]!,
  };
}

describe("startLocalRedis (the private Redis of a serve --workers pool)", () => {
  it("serves on loopback behind its password, keeps the password off the command line, and closes without a trace", async () => {
    const redis = await startLocalRedis({ logger });
    const url = new URL(redis.url);
    expect(url.hostname).toBe("127.0.0.1");
    expect(url.password).toMatch(/^[0-9a-f]{48}$/);
    const server = serverUnder(redis.pid);
    expect(server.cmdline).not.toContain(url.password);

    const client = new Redis({ host: "127.0.0.1", port: Number(url.port), password: url.password });
    try {
      expect(await client.set("k", "v")).toBe("OK");
      expect(await client.get("k")).toBe("v");
      // Without the password nothing is answered.
      expect(await rawReply(Number(url.port), "GET k\r\n")).toMatch(/^-NOAUTH/);
    } finally {
      client.disconnect();
    }

    await redis.close();
    await redis.close(); // idempotent
    expect(existsSync(`/proc/${server.pid}`)).toBe(false);
    expect(existsSync(server.confDir)).toBe(false);
  });

  it("refuses with config_invalid, naming the keys, when the binary is not there", async () => {
    const err = await startLocalRedis({ logger, binary: "/nonexistent/redis-server" }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TalkError);
    expect((err as TalkError).code).toBe("config_invalid");
    expect((err as TalkError).message).toMatch(/server\.workers.*redis\.url.*was not found/s);
  });

  it("gives up with config_invalid after its attempts when the server exits at once", async () => {
    const err = await startLocalRedis({ logger, binary: "false" }).catch((e: unknown) => e);
    expect((err as TalkError).code).toBe("config_invalid");
    expect((err as TalkError).message).toContain("did not start");
  });
});
