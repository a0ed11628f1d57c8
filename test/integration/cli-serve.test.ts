import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import { childEntryArgs } from "../support/child-bundle.js";

/**
 * The server as a user runs it: the real CLI in a child process, on its
 * embedded defaults (no config file, no keys, no Redis), reached over real
 * HTTP and WebSocket on loopback.
 */

/**
 * How `npm start` runs the CLI: the TypeScript sources under tsx. The first test starts it so; the others test
 * what the CLI does once started (signals, refusals) and run it from this run's bundle (test/support/child-bundle.ts),
 * which starts in a fraction of the CPU: under tsx each of the ~400 modules goes through the loader's thread,
 * and eleven such starts made this file the suite's slowest to start its servers.
 */
const TYPED = ["--import", "tsx", "src/cli/main.ts"];
const children: ChildProcessWithoutNullStreams[] = [];

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  entry: string[] = childEntryArgs("talkgate"),
): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, PORT: "0", LOG_LEVEL: "info", ...env },
  });
  children.push(child);
  return child;
}

function collect(child: ChildProcessWithoutNullStreams): { stdout: () => string; stderr: () => string } {
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return { stdout: () => out, stderr: () => err };
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
}

/** Resolves with the URLs from the "talkgate listening" log line. */
function listening(child: ChildProcessWithoutNullStreams): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const onData = (d: Buffer): void => {
      buffer += d.toString();
      for (const line of buffer.split("\n")) {
        if (!line.includes("talkgate listening")) continue;
        child.stdout.off("data", onData);
        resolve((JSON.parse(line) as { urls: string[] }).urls);
        return;
      }
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited with ${code} before listening`)));
  });
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("talkgate serve (embedded defaults)", () => {
  it("serves the Talk API and health routes, logs its URLs, writes session logs and exits 0 on SIGTERM", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const child = runCli(["serve"], { TALKGATE_DATA_DIR: dataDir }, TYPED);
    const logs = collect(child);
    const urls = await listening(child);
    const talkUrl = urls.find((u) => u.endsWith("/talk"))!;
    const httpBase = urls.find((u) => u.endsWith("/healthz"))!.replace(/\/healthz$/, "");
    expect(talkUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/talk$/);
    expect(logs.stdout()).toContain("auth disabled: loopback only");

    expect((await fetch(`${httpBase}/healthz`)).status).toBe(200);
    // The talk page, logged first for a newcomer to open.
    expect(urls[0]).toBe(`${httpBase}/`);
    // Then the console, and one line for all the carriers in local demo mode (not one each).
    expect(urls[1]).toBe(`${httpBase}/console/`);
    expect((await fetch(`${httpBase}/console/`)).status).toBe(200);
    expect(
      logs
        .stdout()
        .split("\n")
        .filter((l) => /local demo mode/i.test(l)),
    ).toHaveLength(1);
    const page = await fetch(`${httpBase}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const ready = (await (await fetch(`${httpBase}/readyz`)).json()) as { ok: boolean };
    expect(ready.ok).toBe(true);
    expect(await (await fetch(`${httpBase}/metrics`)).text()).toContain("talkgate_sessions_active");

    const client = await TalkClient.connect(talkUrl);
    const catalog = (await client.request("talk.catalog", {})) as { providers: { id: string }[] };
    expect(catalog.providers.map((p) => p.id)).toEqual(
      expect.arrayContaining(["espeak-ng", "pocketsphinx", "local-agent"]),
    );
    const speech = await client.request("talk.speak", { text: "Ready." });
    expect(Buffer.from(speech.audioBase64, "base64").byteLength).toBeGreaterThan(1000);

    const created = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
    });
    await client.request("talk.session.close", { sessionId: created.sessionId });
    await client.close();

    child.kill("SIGTERM");
    expect(await exitOf(child)).toBe(0);
    const logFile = join(dataDir, "sessions", `${created.sessionId}.jsonl`);
    expect(existsSync(logFile)).toBe(true);
    const types = readFileSync(logFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types[0]).toBe("session.created");
    expect(types.at(-1)).toBe("session.closed");
    expect(readdirSync(join(dataDir, "sessions"))).toHaveLength(1);
    // Closed cleanly: no open-log marker is left for the next start to close as process_lost.
    expect(readdirSync(join(dataDir, "open-sessions"))).toEqual([]);
    // A hang guard, not a speed check: a cold start under tsx on a loaded 2-core machine took most of 30 s.
  }, 120_000);

  it("a session log left open by a killed process gets a session.closed (process_lost) line on the next start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const first = runCli(["serve"], { TALKGATE_DATA_DIR: dataDir });
    const talkUrl = (await listening(first)).find((u) => u.endsWith("/talk"))!;
    const client = await TalkClient.connect(talkUrl);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
    });
    const logFile = join(dataDir, "sessions", `${sessionId}.jsonl`);
    // The log's lines wait in memory up to runtime.sessionLogFlushMs (1 s) before a write: the kill
    // comes once session.created is on disk, which a SIGKILL cannot take back.
    const deadline = Date.now() + 10_000;
    while (!readFileSync(logFile, "utf8").includes('"session.created"')) {
      if (Date.now() > deadline) throw new Error("session.created never reached the session log");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    first.kill("SIGKILL");
    await exitOf(first);
    await client.close().catch(() => {});
    const before = readFileSync(logFile, "utf8").trim().split("\n");
    expect((JSON.parse(before.at(-1)!) as { type: string }).type).not.toBe("session.closed");

    const second = runCli(["serve"], { TALKGATE_DATA_DIR: dataDir });
    await listening(second);
    const after = readFileSync(logFile, "utf8").trim().split("\n");
    expect(after).toHaveLength(before.length + 1);
    const last = JSON.parse(after.at(-1)!) as { type: string; seq: number; payload: { reason: string } };
    const previous = JSON.parse(before.at(-1)!) as { seq: number };
    expect(last).toMatchObject({ type: "session.closed", sessionId, payload: { reason: "process_lost" } });
    expect(last.seq).toBe(previous.seq + 1);
    expect(readdirSync(join(dataDir, "open-sessions"))).toEqual([]);
    second.kill("SIGTERM");
    expect(await exitOf(second)).toBe(0);
    // Closed once: a third start adds nothing.
    expect(readFileSync(logFile, "utf8").trim().split("\n")).toHaveLength(after.length);
  }, 90_000);

  /** A server whose drain would wait 10 minutes for a running session, with one Talk API session open. */
  async function serverWithSession(): Promise<{
    child: ChildProcessWithoutNullStreams;
    logs: ReturnType<typeof collect>;
    client: TalkClient;
    closed: Promise<string>;
  }> {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ cluster: { drainTimeoutMs: 600_000 } }));
    const child = runCli(["serve", "--config", config], { TALKGATE_DATA_DIR: dir });
    const logs = collect(child);
    const talkUrl = (await listening(child)).find((u) => u.endsWith("/talk"))!;
    const client = await TalkClient.connect(talkUrl);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
    });
    const closed = new Promise<string>((resolve) =>
      client.on("talk.event", (e) => {
        if (e.sessionId === sessionId && e.type === "session.closed") resolve(e.payload.reason);
      }),
    );
    return { child, logs, client, closed };
  }

  const waitForLog = async (logs: ReturnType<typeof collect>, text: string): Promise<void> => {
    while (!logs.stdout().includes(text)) await new Promise((r) => setTimeout(r, 50));
  };

  it("Ctrl-C (SIGINT) with a talk session open: the session is told to close, the log says a second Ctrl-C stops at once, and the process exits 0 without waiting out the drain", async () => {
    const { child, logs, client, closed } = await serverWithSession();
    child.kill("SIGINT");
    // The drain would hold the process for 10 minutes if the session kept it: exiting at all is the check.
    expect(await closed).toBe("shutting_down");
    expect(await exitOf(child)).toBe(0);
    expect(logs.stdout()).toContain("1 Talk API session(s) told to close");
    expect(logs.stdout()).toContain("press Ctrl-C again to stop at once");
    await client.close().catch(() => {});
  }, 90_000);

  it("SIGTERM keeps a talk session to its end; a second signal (Ctrl-C) stops at once with exit 1", async () => {
    const { child, logs, client } = await serverWithSession();
    child.kill("SIGTERM");
    await waitForLog(logs, "waiting up to 600 s for 1 running session(s) to end");
    // The session is still served while the drain waits for it.
    expect(client.closed).toBe(false);
    child.kill("SIGINT");
    expect(await exitOf(child)).toBe(1);
    expect(logs.stdout()).toContain("stopping now, without waiting for running sessions");
    await client.close().catch(() => {});
  }, 90_000);

  it("refuses to start on a config file with an unknown key, naming it, and exits non-zero", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const path = join(dir, "bad.json");
    writeFileSync(path, JSON.stringify({ talk: { input: { interruptOnSpeach: true } } }));
    const child = runCli(["serve", "--config", path]);
    const logs = collect(child);
    expect(await exitOf(child)).toBe(1);
    expect(logs.stderr()).toContain("talk.input.interruptOnSpeach: unknown key");
  });

  it("refuses a bad PORT naming the variable", async () => {
    const child = runCli(["serve"], { PORT: "http" });
    const logs = collect(child);
    expect(await exitOf(child)).toBe(1);
    expect(logs.stderr()).toContain("PORT (server.port)");
  });

  it("on a port already in use says so and how to choose another (PORT, --port, server.port), not a raw stack", async () => {
    // A real listener holds the port, as a first server would.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const child = runCli(["serve"], { PORT: String(port) });
      const logs = collect(child);
      expect(await exitOf(child)).toBe(1);
      expect(logs.stderr()).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(logs.stderr()).toMatch(/PORT=\d+ npm start, talkgate serve --port \d+, or server\.port/);
      expect(logs.stderr()).not.toMatch(/\n\s+at /);
      // --port is the way out it names.
      const other = runCli(["serve", "--port", "0"], { PORT: String(port) });
      const urls = await listening(other);
      expect(urls[0]).not.toContain(`:${port}/`);
      other.kill("SIGTERM");
      expect(await exitOf(other)).toBe(0);
    } finally {
      holder.close();
    }
  }, 120_000);

  it("talkgate doctor migrates a legacy config file and reports each move", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const path = join(dir, "legacy.json");
    writeFileSync(
      path,
      JSON.stringify({
        talk: { realtimeProvider: "openai", realtimeProviders: { openai: { apiKey: "sk-1" } } },
      }),
    );
    const child = runCli(["doctor", "--config", path]);
    const logs = collect(child);
    expect(await exitOf(child)).toBe(0);
    expect(logs.stdout()).toContain("moved talk.realtimeProvider -> talk.realtime.provider");
    expect(JSON.parse(readFileSync(path, "utf8")).talk.realtime.provider).toBe("openai");
  });

  it("doctor refuses a talk.provider that names no provider, as serve does, with serve's message", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-cli-"));
    const path = join(dir, "unknown-provider.json");
    writeFileSync(path, JSON.stringify({ talk: { provider: "whisperx" } }));
    const serve = runCli(["serve", "--config", path]);
    const serveLogs = collect(serve);
    const doctor = runCli(["doctor", "--config", path]);
    const doctorLogs = collect(doctor);
    expect(await exitOf(serve)).not.toBe(0);
    expect(await exitOf(doctor)).toBe(1);
    const refusal = /talk\.provider: no speech provider "whisperx" is configured[^\n]*/;
    const said = serveLogs.stderr().match(refusal)?.[0];
    expect(said).toContain("moonshine");
    expect(doctorLogs.stdout()).toContain(said);
    expect(doctorLogs.stdout()).not.toContain("configuration is valid");
  });

  it("an unknown command prints the help and exits 2", async () => {
    const child = runCli(["serv"]);
    const logs = collect(child);
    expect(await exitOf(child)).toBe(2);
    expect(logs.stderr()).toContain('unknown command "serv"');
  });
});
