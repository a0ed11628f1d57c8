import type { Redis } from "ioredis";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { directoryUnavailable } from "./directory-errors.js";
import type { RedisKeys } from "./redis-connection.js";
import {
  checkSettingName,
  decodeSettingValue,
  encodeSettingValue,
  type SettingFanout,
  type SettingListener,
  type SettingRecord,
  type SharedSettings,
} from "./shared-settings.js";

/**
 * KEYS: setting hash, settings channel. ARGV: name, value JSON.
 * One script, so the stored value and the announcement carry the same
 * revision and announcements leave in revision order. The message is built
 * from the value's JSON text as is (never decoded and re-encoded in Lua).
 */
const WRITE = `
local rev = redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('HSET', KEYS[1], 'value', ARGV[2])
redis.call('PUBLISH', KEYS[2], '{"name":"' .. ARGV[1] .. '","revision":' .. rev .. ',"value":' .. ARGV[2] .. '}')
return rev`;

export interface RedisSettingsContext {
  commands: Redis;
  subscriber: Redis;
  keys: RedisKeys;
  fanout: SettingFanout;
  logger: TalkLogger;
}

/**
 * Shared settings in Redis, the source of truth in a cluster: hash
 * `<prefix>setting:<name>` {revision, value} and channel `<prefix>settings`.
 * Pub/sub fits a change announcement (everyone listening now hears it);
 * what a worker missed while its connection was down is read back from the
 * hashes when it reconnects (`resync`), so no change is lost for good.
 */
export class RedisSettings implements SharedSettings {
  readonly #ctx: RedisSettingsContext;
  readonly #onMessage = (channel: string, message: string): void => this.#heard(channel, message);

  constructor(ctx: RedisSettingsContext) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    const { subscriber, keys } = this.#ctx;
    subscriber.on("message", this.#onMessage);
    await subscriber.subscribe(keys.settingsChannel);
  }

  close(): void {
    this.#ctx.subscriber.off("message", this.#onMessage);
  }

  async read(name: string): Promise<SettingRecord | undefined> {
    checkSettingName(name);
    const { commands, keys, fanout, logger } = this.#ctx;
    fanout.track(name);
    if (commands.status !== "ready") throw directoryUnavailable("read a shared setting");
    let stored: Record<string, string>;
    try {
      stored = await commands.hgetall(keys.setting(name));
    } catch (err) {
      throw directoryUnavailable("read a shared setting", err);
    }
    if (stored["value"] === undefined) return undefined;
    const revision = Number(stored["revision"]);
    if (!Number.isSafeInteger(revision) || revision < 1) {
      logger.warn(
        { setting: name, revision: stored["revision"] },
        "stored setting has no valid revision; ignored",
      );
      return undefined;
    }
    const decoded = decodeSettingValue(stored["value"], name, keys.setting(name), logger);
    return decoded.ok ? { revision, value: decoded.value } : undefined;
  }

  async write(name: string, value: unknown): Promise<SettingRecord> {
    checkSettingName(name);
    const json = encodeSettingValue(value);
    const { commands, keys, fanout } = this.#ctx;
    if (commands.status !== "ready") throw directoryUnavailable("write a shared setting");
    let revision: number;
    try {
      revision = Number(await commands.eval(WRITE, 2, keys.setting(name), keys.settingsChannel, name, json));
    } catch (err) {
      if (commands.status !== "ready") throw directoryUnavailable("write a shared setting", err);
      // E.g. someone stored a non-integer revision by hand: say so rather than guess a revision.
      throw new TalkError("internal", `The shared setting ${name} could not be written.`, { cause: err });
    }
    const record: SettingRecord = { revision, value: JSON.parse(json) as unknown };
    // Here at once; the same revision coming back on the channel is then dropped.
    fanout.deliver(name, record);
    return { revision, value: JSON.parse(json) as unknown };
  }

  onChange(listener: SettingListener): () => void {
    return this.#ctx.fanout.on(listener);
  }

  /** After a reconnect: reads every setting this worker follows and delivers what changed meanwhile. */
  async resync(): Promise<void> {
    const { fanout, logger } = this.#ctx;
    for (const name of fanout.names) {
      try {
        const record = await this.read(name);
        if (record) fanout.deliver(name, record);
      } catch (err) {
        logger.debug({ err, setting: name }, "setting resync failed; retried at the next reconnect");
        return;
      }
    }
  }

  #heard(channel: string, raw: string): void {
    const { keys, fanout, logger } = this.#ctx;
    if (channel !== keys.settingsChannel) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      logger.warn({ channel }, "malformed setting change ignored");
      return;
    }
    if (typeof message !== "object" || message === null) {
      logger.warn({ channel }, "malformed setting change ignored");
      return;
    }
    const { name, revision, value } = message as { name?: unknown; revision?: unknown; value?: unknown };
    if (
      typeof name !== "string" ||
      typeof revision !== "number" ||
      !Number.isSafeInteger(revision) ||
      !("value" in message)
    ) {
      logger.warn({ channel }, "malformed setting change ignored");
      return;
    }
    fanout.deliver(name, { revision, value });
  }
}
