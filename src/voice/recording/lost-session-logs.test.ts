import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closeLostSessionLogs } from "./lost-session-logs.js";
import { NOOP_LOGGER } from "../../core/logger.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid as number;
}

function plant(sessionId: string, lines: string, writer: Record<string, unknown>): void {
  mkdirSync(join(dir!, "open-sessions"), { recursive: true });
  mkdirSync(join(dir!, "sessions"), { recursive: true });
  writeFileSync(join(dir!, "sessions", `${sessionId}.jsonl`), lines);
  writeFileSync(join(dir!, "open-sessions", sessionId), JSON.stringify(writer));
}

const created = (id: string, seq: number) =>
  `${JSON.stringify({ id: "e", type: "session.created", sessionId: id, seq, mode: "stt-tts", transport: "managed-room", brain: "agent-consult", payload: {} })}\n`;

describe("closeLostSessionLogs", () => {
  it("closes a log whose writer died, ending a torn last line first; leaves other hosts' logs alone", () => {
    dir = mkdtempSync(join(tmpdir(), "talkgate-lost-"));
    const pid = deadPid();
    plant("torn", `${created("torn", 1)}{"type":"turn.sta`, { host: hostname(), pid, instance: "old" });
    plant("remote", created("remote", 1), { host: "another-host", pid, instance: "x" });
    plant("closed", `${created("closed", 1)}${JSON.stringify({ type: "session.closed", seq: 2 })}\n`, {
      host: hostname(),
      pid,
      instance: "old",
    });
    expect(closeLostSessionLogs(join(dir, "sessions"), NOOP_LOGGER)).toEqual(["torn"]);
    const lines = readFileSync(join(dir, "sessions", "torn.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toMatchObject({
      type: "session.closed",
      sessionId: "torn",
      seq: 2,
      mode: "stt-tts",
      payload: { reason: "process_lost" },
    });
    expect(readdirSync(join(dir, "open-sessions")).sort()).toEqual(["remote"]);
    // A second start finds nothing more to do.
    expect(closeLostSessionLogs(join(dir, "sessions"), NOOP_LOGGER)).toEqual([]);
  });

  it("an earlier instance under this process's pid (containers reuse pid 1) counts as gone; a live process does not", () => {
    dir = mkdtempSync(join(tmpdir(), "talkgate-lost-"));
    plant("reused", created("reused", 3), { host: hostname(), pid: process.pid, instance: "earlier" });
    plant("live", created("live", 1), { host: hostname(), pid: process.ppid, instance: "x" });
    expect(closeLostSessionLogs(join(dir, "sessions"), NOOP_LOGGER)).toEqual(["reused"]);
  });
});
