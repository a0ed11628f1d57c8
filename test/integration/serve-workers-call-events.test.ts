/**
 * A call's events from any worker of `talkgate serve --workers 2`: the
 * primary hands each connection to the next worker, so a call's stream and a
 * watcher of its events land on different workers. Every worker serves
 * `/telephony/calls/<sid>/events` (the worker that runs the call from its
 * session, the other through the call directory and the event stream), and
 * `talkgate call` against the pool prints the call's transcript.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { request, type ClientRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_WORDS } from "../../src/cli/call-progress.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { childEntryArgs } from "../support/child-bundle.js";
import { deleteKeys, freePort, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { ServePool } from "../support/serve-pool.js";

const prefix = uniquePrefix("serve-call-events");
const dir = mkdtempSync(join(tmpdir(), "talkgate-call-events-"));
const RECORDING = "/usr/share/pocketsphinx/test/data/cards/001.wav";
let pool: ServePool;

beforeAll(async () => {
  const port = await freePort();
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      server: { port },
      redis: { url: SHARED_REDIS_URL, keyPrefix: prefix },
      dataDir: join(dir, "data"),
      log: { level: "warn" },
      telephony: { defaultMode: "stt-tts", greeting: "Hello from the pool.", greetingProtectMs: 0 },
    }),
  );
  pool = new ServePool(port, ["--config", config, "--workers", "2"]);
  await pool.until("two workers listening", 90_000, async () => (await pool.workerIds()).length === 2);
}, 100_000);

afterAll(async () => {
  pool?.kill();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

/** One watcher of a call's events on a connection of its own (so on the next worker). */
interface Watcher {
  status: Promise<number>;
  events: TalkEvent[];
  /** Resolves when the server ends the response. */
  ended: Promise<void>;
  close(): void;
}

function watch(callSid: string): Watcher {
  const events: TalkEvent[] = [];
  let req: ClientRequest;
  let resolveEnded!: () => void;
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  const status = new Promise<number>((resolve, reject) => {
    req = request(
      { host: "127.0.0.1", port: pool.port, path: `/telephony/calls/${callSid}/events`, agent: false },
      (res) => {
        resolve(res.statusCode ?? 0);
        let buffer = "";
        res.on("data", (d: Buffer) => {
          buffer += d.toString();
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const data = buffer
              .slice(0, end)
              .split("\n")
              .filter((l) => l.startsWith("data: "))
              .map((l) => l.slice(6))
              .join("\n");
            buffer = buffer.slice(end + 2);
            if (data) events.push(JSON.parse(data) as TalkEvent);
          }
        });
        res.on("end", resolveEnded);
        res.on("close", resolveEnded);
      },
    );
    req.on("error", reject);
    req.end();
  });
  return { status, events, ended, close: () => req.destroy() };
}

async function until(what: string, check: () => boolean, ms = 20_000, seen?: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${seen ? `; had: ${seen()}` : ""}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("serve --workers 2: a call's events", () => {
  it("every worker serves /telephony/calls/<sid>/events, replay to session.closed, whichever took the stream", async () => {
    const sid = 38;
    const callSid = `CA${String(sid).padStart(32, "0")}`;
    const call = await pool.openCall(sid);
    const watchers: Watcher[] = [];
    try {
      await call.waitFor(() => call.receivedAudioMs > 500);
      // Six requests in turn: three on each worker.
      for (let i = 0; i < 6; i++) watchers.push(watch(callSid));
      expect(await Promise.all(watchers.map((w) => w.status))).toEqual([200, 200, 200, 200, 200, 200]);
      // On a timeout, say which watcher and what it had (two full runs once timed out here: a watcher that
      // subscribed while the stream's read was out took that read's event as its first, src/cluster/event-stream.ts).
      for (const [i, w] of watchers.entries()) {
        await until(
          `watcher ${i}'s replay to reach output.audio.started`,
          () => w.events.some((e) => e.type === "output.audio.started"),
          20_000,
          () => w.events.map((e) => `${e.seq}:${e.type}`).join(", ") || "no event",
        );
        expect(w.events[0]).toMatchObject({ type: "session.created", seq: 1 });
        expect((w.events[0]!.payload as { metadata: Record<string, string> }).metadata.callSid).toBe(callSid);
      }
      await call.stop();
      await Promise.all(watchers.map((w) => w.ended));
      const sessions = new Set(watchers.map((w) => w.events[0]!.sessionId));
      expect(sessions.size).toBe(1);
      for (const w of watchers) {
        // Each seq once, in order, ending with the terminal event.
        const seqs = w.events.map((e) => e.seq);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        expect(new Set(seqs).size).toBe(seqs.length);
        expect(w.events.at(-1)).toMatchObject({ type: "session.closed" });
      }
    } finally {
      for (const w of watchers) w.close();
      await call.close();
    }
  }, 60_000);

  it("an unknown call is 404 from every worker after the wait", async () => {
    const watchers = [watch("CAnosuchcall"), watch("CAnosuchcall")];
    expect(await Promise.all(watchers.map((w) => w.status))).toEqual([404, 404]);
  }, 30_000);

  it("`talkgate call` against the pool prints the call's transcript", async () => {
    const child = spawn(
      process.execPath,
      [
        ...childEntryArgs("talkgate"),
        "call",
        RECORDING,
        "--url",
        `http://127.0.0.1:${pool.port}`,
        "--out",
        join(dir, "answer.wav"),
        "--mode",
        "stt-tts",
      ],
      // The CLI's view of the call's events on stderr, so a failure below says what the call went through.
      { cwd: process.cwd(), env: { ...process.env, TALKGATE_CALL_DEBUG: "1" } },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const seen = `stdout:\n${out}\nstderr:\n${err}`;
    expect(err, seen).not.toContain("transcript unavailable");
    expect(code, seen).toBe(0);
    // A caller turn with words in it (not the line for a turn heard as no words), and its answer.
    const caller = out.split("\n").find((l) => l.startsWith("caller: ") && l !== `caller: ${NO_WORDS}`);
    expect(caller, seen).toMatch(/[a-z]/i);
    expect(out, seen).toMatch(/^assistant: .*[a-z]/im);
    expect(err, seen).toContain("session closed: completed");
  }, 90_000);
});
