import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BotStatus, TranscriptLine } from "../../src/meetings/index.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import WebSocket from "ws";
import { launchParticipant, speechWav, wordsOf, type Participant } from "./meetings-harness.js";

/** A raw Talk API connection (no auth configured: loopback is anonymous with read + write). */
async function talk(url: string) {
  const ws = new WebSocket(url, ["talkgate"]);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const events: { event: string; payload: any }[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const pending = new Map<string, (frame: any) => void>();
  ws.on("message", (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === "res") pending.get(frame.id)?.(frame);
    else if (frame.type === "event") events.push(frame);
  });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let n = 0;
  return {
    ws,
    events,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    call: (method: string, params: unknown): Promise<any> =>
      new Promise((resolve) => {
        const id = `r${++n}`;
        pending.set(id, resolve);
        ws.send(JSON.stringify({ type: "req", id, method, params }));
      }),
  };
}

/** An SSE reader: collects `{event, id, data}` until the stream ends. */
function sse(url: string) {
  const events: { event: string; id?: string; data: string }[] = [];
  const ended = (async () => {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`SSE answered ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const at = line.indexOf(": ");
          if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
        }
        if (fields["event"])
          events.push({ event: fields["event"], id: fields["id"], data: fields["data"] ?? "" });
      }
    }
  })();
  return { events, ended };
}

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
  let follower: Awaited<ReturnType<typeof talk>>;
  let resumer: Awaited<ReturnType<typeof talk>>;
  let live: ReturnType<typeof sse>;

  beforeAll(async () => {
    const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix };
    [a, b] = await Promise.all([
      WorkerProcess.start({ ...common, workerId: "bots-a", roles: ["bot"] }),
      WorkerProcess.start({ ...common, workerId: "front-b", roles: ["api"] }),
    ]);
  }, 60_000);

  afterAll(async () => {
    follower?.ws.close();
    resumer?.ws.close();
    await dave?.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteKeys(SHARED_REDIS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const get = async <T>(worker: WorkerProcess, path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${worker.httpUrl}${path}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  /** Polls `read` until `done`; after 45 s fails with the last value read (a test timeout would hide it). */
  const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 45_000;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline)
        throw new Error(`still waiting after 45 s; last read: ${JSON.stringify(value)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it("a bot requested on a worker without the bot role runs on the bot worker, and its status and transcript read the same from both", async () => {
    // The meeting is the test room served by B, which takes the request (a test room is its server's own
    // origin only, issue 38); the bot's job runs on A.
    const room = `${b.httpUrl}/meetings/test-room/cluster`;
    dave = await launchParticipant(room, "Dave", dir, speechWav(dir, "goforward.raw"));
    const res = await fetch(`${b.httpUrl}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ meetingUrl: room, botName: "Notetaker", mode: "transcribe" }),
    });
    expect(res.status).toBe(201);
    botId = ((await res.json()) as BotStatus).id;
    // A Talk API client on B follows the bot, read-only, from its start; an SSE client on B too.
    follower = await talk(b.talkUrl);
    const followed = await follower.call("meetings.bots.follow", { botId });
    // On failure: the answer and B's last warnings and errors (pino levels 40+).
    const warnings = () => b.lines.filter((l) => Number(l.level) >= 40).slice(-5);
    expect(followed.ok, JSON.stringify({ followed, warnings: warnings() })).toBe(true);
    expect(followed.payload).toMatchObject({ botId, afterIndex: -1, status: { id: botId } });
    live = sse(`${b.httpUrl}/meetings/bots/${botId}/transcript/live`);

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
    // Followed live on B: each line once, in order, numbered by its place in the transcript.
    await until(
      async () => follower.events.filter((e) => e.event === "meetings.transcript.line").length,
      (n) => n >= lines.length,
    );
    const followedLines = follower.events.filter((e) => e.event === "meetings.transcript.line");
    expect(followedLines.slice(0, lines.length).map((e) => e.payload)).toEqual(
      lines.map((line, index) => ({ botId, index, line })),
    );
    const states = follower.events
      .filter((e) => e.event === "meetings.bot.status")
      .map((e) => e.payload.status.state);
    expect(states).toContain("in_call");
    // A client resuming after line 0 gets line 1 on (or nothing yet when there is one line).
    resumer = await talk(a.talkUrl);
    expect((await resumer.call("meetings.bots.follow", { botId, afterIndex: 0 })).ok).toBe(true);
    expect((await resumer.call("meetings.bots.follow", { botId: "no-such-bot" })).error.code).toBe(
      "session_not_found",
    );
    expect((await resumer.call("meetings.bots.follow", { botId, afterIndex: -2 })).error.code).toBe(
      "invalid_params",
    );
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
    // The follow ends once the bot ended and every line was sent: the same lines as the transcript.
    await until(
      async () => follower.events.some((e) => e.event === "meetings.follow.ended"),
      (done) => done,
    );
    const final = (await get<{ lines: TranscriptLine[] }>(b, `/meetings/bots/${botId}/transcript`)).body
      .lines;
    const streamed = follower.events
      .filter((e) => e.event === "meetings.transcript.line")
      .map((e) => e.payload.line);
    expect(streamed).toEqual(final);
    expect(follower.events.at(-1)!.payload.status).toMatchObject({ state: "ended", subCode: "requested" });
    // The resumed follow (started on A, the owner) has every line after the first.
    await until(
      async () => resumer.events.some((e) => e.event === "meetings.follow.ended"),
      (done) => done,
    );
    expect(
      resumer.events.filter((e) => e.event === "meetings.transcript.line").map((e) => e.payload.index),
    ).toEqual(final.slice(1).map((_, i) => i + 1));
    // SSE: the same lines, ids = indexes, then "end", and the stream closes.
    await live.ended;
    const sseLines = live.events.filter((e) => e.event === "line");
    expect(sseLines.map((e) => JSON.parse(e.data))).toEqual(final);
    expect(sseLines.map((e) => e.id)).toEqual(final.map((_, i) => String(i)));
    expect(live.events.at(-1)!.event).toBe("end");
    // Exports from the worker that never ran the bot match the transcript, speaker names included.
    const vtt = await (await fetch(`${b.httpUrl}/meetings/bots/${botId}/transcript?format=vtt`)).text();
    expect(vtt.startsWith("WEBVTT\n")).toBe(true);
    expect(vtt.match(/^<v Dave>/gm)).toHaveLength(final.length);
    for (const line of final) expect(vtt).toContain(`<v Dave>${line.text}`);
    const srt = await (await fetch(`${b.httpUrl}/meetings/bots/${botId}/transcript?format=srt`)).text();
    expect(srt.match(/^\d+$/gm)).toHaveLength(final.length);
    for (const line of final) expect(srt).toContain(`Dave: ${line.text}`);
    const txt = await (await fetch(`${b.httpUrl}/meetings/bots/${botId}/transcript?format=txt`)).text();
    expect(txt.trim().split("\n")).toEqual(
      final.map((l) => expect.stringMatching(new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\] Dave: ${l.text}$`))),
    );
    expect((await fetch(`${b.httpUrl}/meetings/bots/${botId}/transcript?format=doc`)).status).toBe(400);
    const viaApi = await follower.call("meetings.bots.transcript", { botId, format: "srt" });
    expect(viaApi.payload).toEqual({ botId, format: "srt", text: srt });
    // The participant sees the bot go.
    await dave!.page.waitForFunction(`document.querySelectorAll("#roster li:not([data-self])").length === 0`);
    // The transcript stays readable from the worker that never ran the bot.
    expect(
      (await get<{ lines: TranscriptLine[] }>(b, `/meetings/bots/${botId}/transcript`)).body.lines.length,
    ).toBeGreaterThan(0);
    expect((await get<unknown>(b, "/meetings/bots/no-such-bot")).status).toBe(404);
  }, 60_000);

  it("a bot whose job has not started (joinAt later) reads as scheduled from both workers and can be followed", async () => {
    // Until the bot's worker reports, the job's progress is the queue's default (BullMQ: 0), not a status.
    const joinAt = new Date(Date.now() + 10 * 60_000).toISOString();
    const res = await fetch(`${b.httpUrl}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        meetingUrl: `${b.httpUrl}/meetings/test-room/later`,
        botName: "Later",
        mode: "transcribe",
        joinAt,
      }),
    });
    expect(res.status).toBe(201);
    const laterId = ((await res.json()) as BotStatus).id;
    for (const [name, worker] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const seen = await get<BotStatus>(worker, `/meetings/bots/${laterId}`);
      expect(seen.status, name).toBe(200);
      expect(seen.body).toMatchObject({ id: laterId, state: "scheduled", botName: "Later" });
    }
    const client = await talk(a.talkUrl);
    try {
      const followed = await client.call("meetings.bots.follow", { botId: laterId });
      expect(followed.ok, JSON.stringify(followed)).toBe(true);
      expect(followed.payload.status).toMatchObject({ id: laterId, state: "scheduled" });
    } finally {
      client.ws.close();
    }
    // DELETE from the worker that did not take the request (no local bot: the job's record answers).
    const left = await fetch(`${a.httpUrl}/meetings/bots/${laterId}`, { method: "DELETE" });
    expect(left.status).toBe(202);
    expect(await left.json()).toMatchObject({ id: laterId });
  }, 60_000);
});
