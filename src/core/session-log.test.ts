import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLog, prepareSessionLogDir } from "./session-log.js";
import type { TalkEvent } from "./talk-events.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-log-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function event(seq: number): TalkEvent {
  return {
    id: `e${seq}`,
    type: "health.changed",
    sessionId: "abc",
    seq,
    timestamp: new Date(0).toISOString(),
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    payload: { ok: true },
  };
}

describe("SessionLog", () => {
  it("writes one JSON line per event to sessions/<id>.jsonl, readable before close", () => {
    const dataDir = tempDir();
    const log = new SessionLog({ dataDir, sessionId: "abc" });
    log.append(event(1));
    log.append(event(2));
    expect(log.path).toBe(join(dataDir, "sessions", "abc.jsonl"));
    const lines = readFileSync(log.path, "utf8").trimEnd().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as TalkEvent).seq)).toEqual([1, 2]);
    log.close();
    log.close();
    log.append(event(3));
    expect(readFileSync(log.path, "utf8").trimEnd().split("\n")).toHaveLength(2);
  });

  it("rejects a data dir that is a file with config_invalid naming the directory", () => {
    const file = join(tempDir(), "not-a-dir");
    writeFileSync(file, "x");
    expect(() => prepareSessionLogDir(file)).toThrow(expect.objectContaining({ code: "config_invalid" }));
    expect(() => new SessionLog({ dataDir: file, sessionId: "abc" })).toThrow(/not-a-dir/);
  });

  it("refuses a session id that would escape the sessions directory", () => {
    expect(() => new SessionLog({ dataDir: tempDir(), sessionId: "../etc" })).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
  });
});
