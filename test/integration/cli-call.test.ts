/**
 * `talkgate call FILE.wav` as a newcomer runs it: a real server process on
 * its embedded defaults (no keys: stt-tts with pocketsphinx, the local agent
 * and espeak-ng), and the real CLI in another process placing a simulated
 * Twilio call with a pocketsphinx-testdata recording as the caller.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NO_WORDS } from "../../src/cli/call-progress.js";
import { rms } from "../../src/codecs/pcm.js";
import { readWav } from "../../src/codecs/wav.js";
import { childEntryArgs } from "../support/child-bundle.js";

/**
 * `npx talkgate` as a newcomer types it: the package's bin, which runs the TypeScript sources under tsx. The call
 * a newcomer places runs so; the server it calls, and the checks of the command's refusals, run the same CLI from
 * this run's bundle (test/support/child-bundle.ts), which starts in a fraction of tsx's CPU (cli-serve starts
 * `npm start`'s form).
 */
const TYPED = ["bin/talkgate.js"];
const RECORDING = "/usr/share/pocketsphinx/test/data/cards/001.wav";
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  entry: string[] = childEntryArgs("talkgate"),
): {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function serverUrl(server: ReturnType<typeof run>): Promise<string> {
  for (;;) {
    const line = server
      .stdout()
      .split("\n")
      .find((l) => l.includes("talkgate listening"));
    if (line)
      return (JSON.parse(line) as { urls: string[] }).urls
        .find((u) => u.endsWith("/healthz"))!
        .replace(/\/healthz$/, "");
    if (server.child.exitCode !== null) throw new Error(`server exited: ${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("talkgate call", () => {
  it("places a simulated call on the embedded defaults, prints the transcript and writes the assistant's speech to a WAV", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-call-"));
    const server = run(["serve"], { PORT: "0", LOG_LEVEL: "info", TALKGATE_DATA_DIR: join(dir, "data") });
    const url = await serverUrl(server);
    // As a newcomer runs it: no --url (the server on PORT, as `npm start` reads it) and no --out (the
    // system's temporary directory, not the working tree).
    const port = new URL(url).port;
    const call = run(["call", RECORDING, "--mode", "stt-tts"], { PORT: port, TMPDIR: dir }, TYPED);
    expect(await call.exit).toBe(0);
    const out = join(dir, "talkgate-answer.wav");
    expect(call.stderr()).toContain(`-> ${out}`);

    const lines = call.stdout().split("\n");
    const caller = lines.find((l) => l.startsWith("caller: "));
    const assistant = lines.find((l) => l.startsWith("assistant: "));
    // Words heard: not the line printed for a turn the recognizer heard nothing in.
    expect(caller?.slice("caller: ".length)).toMatch(/[a-z]+/i);
    expect(caller).not.toBe(`caller: ${NO_WORDS}`);
    expect(assistant?.slice("assistant: ".length)).toMatch(/[a-z]+/i);
    expect(call.stderr()).toContain("session closed: completed");

    const wav = readWav(new Uint8Array(readFileSync(out)));
    expect(wav.format).toMatchObject({ sampleRate: 8000, channels: 1 });
    expect(wav.pcm.length).toBeGreaterThan(8000 * 0.5); // at least half a second of answer
    // Speech energy: espeak-ng's answer through u-law is far above the -50 dBFS of line silence.
    expect(rms(wav.pcm)).toBeGreaterThan(500);
  }, 60_000);

  it("says where no server answers, and how to start or find one", async () => {
    const call = run(["call", RECORDING, "--url", "http://127.0.0.1:1"]);
    expect(await call.exit).toBe(1);
    expect(call.stderr()).toContain("No server at http://127.0.0.1:1: start one with `npm start`");
  });

  it("is listed with every option in talkgate --help", async () => {
    const help = run(["--help"]);
    expect(await help.exit).toBe(0);
    for (const option of ["--url", "--out", "--mode", "--token", "--max-seconds", "--over-greeting"])
      expect(help.stdout()).toContain(option);
  });

  it("refuses a missing file argument or an unknown mode with usage and exit code 2", async () => {
    const bad = run(["call", RECORDING, "--mode", "carrier-pigeon"]);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain("usage: talkgate call FILE.wav");
    const none = run(["call"]);
    expect(await none.exit).toBe(2);
  });
});
