import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotStatus, TranscriptLine } from "../../src/meetings/index.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { launchParticipant, speechWav, wordsOf, type Participant } from "./meetings-harness.js";

/**
 * Two real server processes sharing the local Redis (unique key prefix):
 * A has the `bot` role and runs the bot's job; B (role `api`: no jobs) takes the
 * requests. Chromium processes: 1 bot + 1 participant.
 */
describe("meeting bots across worker processes", () => {
  const prefix = uniquePrefix("e2e-meetings");
  const dir = mkdtempSync(join(tmpdir(), "talkgate-meetings-cluster-"));
  let a: WorkerProcess;
  let b: WorkerProcess;
  let dave: Participant | undefined;
  let botId: string;

  beforeAll(async () => {
    const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix };
    [a, b] = await Promise.all([
      WorkerProcess.start({ ...common, workerId: "bots-a", roles: ["bot"] }),
      WorkerProcess.start({ ...common, workerId: "front-b", roles: ["api"] }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await dave?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteKeys(SHARED_REDIS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const get = async <T>(worker: WorkerProcess, path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${worker.httpUrl}${path}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it("a bot requested on a worker without the bot role runs on the bot worker, and its status and transcript read the same from both", async () => {
    // The meeting is the test room served by A; the request goes to B.
    const room = `${a.httpUrl}/meetings/test-room/cluster`;
    dave = await launchParticipant(room, "Dave", dir, speechWav(dir, "goforward.raw"));
    const res = await fetch(`${b.httpUrl}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ meetingUrl: room, botName: "Notetaker", mode: "transcribe" }),
    });
    expect(res.status).toBe(201);
    botId = ((await res.json()) as BotStatus).id;

    const onB = await until(
      () => get<BotStatus>(b, `/meetings/bots/${botId}`),
      (r) => r.body.state === "in_call" && r.body.participants.includes("Dave"),
    );
    expect(onB.status).toBe(200);
    const onA = await get<BotStatus>(a, `/meetings/bots/${botId}`);
    expect(onA.body.state).toBe("in_call");
    expect(onA.body.sessionId).toBe(onB.body.sessionId);

    const lines = await until(
      async () =>
        (await get<{ lines: TranscriptLine[] }>(b, `/meetings/bots/${botId}/transcript`)).body.lines,
      (l) => wordsOf(l, "Dave").has("forward"),
    );
    expect(lines.every((l) => l.speaker === "Dave")).toBe(true);
    // Only A launched a browser for it.
    expect(a.lines.some((l) => l.msg === "meeting bot state" && l.botId === botId)).toBe(true);
    expect(
      b.lines.some((l) => l.msg === "meeting bot state" && l.botId === botId && l.state !== "scheduled"),
    ).toBe(false);
  }, 120_000);

  it("DELETE on the other worker makes the bot leave with requested, seen from both workers", async () => {
    const del = await fetch(`${b.httpUrl}/meetings/bots/${botId}`, { method: "DELETE" });
    expect(del.status).toBe(202);
    const ended = await until(
      () => get<BotStatus>(b, `/meetings/bots/${botId}`),
      (r) => r.body.state === "ended" || r.body.state === "fatal",
    );
    expect(ended.body.state).toBe("ended");
    expect(ended.body.subCode).toBe("requested");
    expect((await get<BotStatus>(a, `/meetings/bots/${botId}`)).body.subCode).toBe("requested");
    // The participant sees the bot go.
    await dave!.page.waitForFunction(`document.querySelectorAll("#roster li:not([data-self])").length === 0`);
    // The transcript stays readable from the worker that never ran the bot.
    expect(
      (await get<{ lines: TranscriptLine[] }>(b, `/meetings/bots/${botId}/transcript`)).body.lines.length,
    ).toBeGreaterThan(0);
    expect((await get<unknown>(b, "/meetings/bots/no-such-bot")).status).toBe(404);
  }, 60_000);
});
