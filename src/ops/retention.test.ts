import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../core/index.js";
import { RetentionSweeper } from "./retention.js";

const DAY = 86_400_000;
let sweeper: RetentionSweeper | undefined;
afterEach(() => sweeper?.close());

function file(dir: string, name: string, ageDays: number, now: number): void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, "{}\n");
  const at = new Date(now - ageDays * DAY);
  utimesSync(path, at, at);
}

describe("RetentionSweeper", () => {
  it("deletes the files of each kind older than its days, keeps newer ones, other names and kinds kept forever (0)", async () => {
    const root = mkdtempSync(join(tmpdir(), "talkgate-retention-"));
    const now = Date.now();
    const sessions = join(root, "sessions");
    const usage = join(root, "usage");
    file(sessions, "old.jsonl", 10, now);
    file(sessions, "new.jsonl", 1, now);
    file(sessions, "notes.txt", 100, now);
    file(usage, "2020-01-01.w1.jsonl", 900, now);
    sweeper = new RetentionSweeper(
      [
        { kind: "sessionLogs", dir: sessions, days: 7, match: /\.jsonl$/ },
        { kind: "ledger", dir: usage, days: 0, match: /\.jsonl$/ },
        { kind: "recordings", dir: join(root, "recordings"), days: 1, match: /./ },
      ],
      NOOP_LOGGER,
    );
    expect(await sweeper.sweep(now)).toBe(1);
    expect(readdirSync(sessions).sort()).toEqual(["new.jsonl", "notes.txt"]);
    expect(readdirSync(usage)).toEqual(["2020-01-01.w1.jsonl"]);
  });
});
