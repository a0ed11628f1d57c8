import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";

const run = promisify(execFile);

/**
 * The server compiled (`npm run build`, then `npm run start:compiled`: plain node, no tsx loader),
 * as an operator runs it in production: its files found from dist/ (the pages, the echo canceller's
 * binding, the recognizer's decoder script), the Talk API and the local engines answering, a clean
 * exit on SIGTERM. The build writes dist/ in the checkout, as the script does for a user. It runs the
 * build's emit (`npm run build:emit`, tsc --noCheck: the same files) without `npm run build`'s type check,
 * which the suite's static checks run beside it (`npm run check`): 8.9 CPU-s against 26.5.
 */
describe("talkgate serve, compiled", () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
  });

  it("builds, serves the pages and the Talk API from dist/, speaks, and exits 0 on SIGTERM", async () => {
    await run("npm", ["run", "build:emit"], { cwd: process.cwd(), timeout: 180_000 });
    expect(existsSync("dist/cli/main.js")).toBe(true);
    expect(existsSync("dist/providers/pocketsphinx/sphinx-decoder.py")).toBe(true);

    child = spawn(process.execPath, ["--enable-source-maps", "dist/cli/main.js", "serve"], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: "0", LOG_LEVEL: "info" },
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const urls = await new Promise<string[]>((resolve, reject) => {
      const onData = (): void => {
        const line = stdout.split("\n").find((l) => l.includes("talkgate listening"));
        if (!line) return;
        child!.stdout.off("data", onData);
        resolve((JSON.parse(line) as { urls: string[] }).urls);
      };
      child!.stdout.on("data", onData);
      child!.once("exit", (code) => reject(new Error(`server exited with ${code}: ${stdout}`)));
    });
    const httpBase = urls.find((u) => u.endsWith("/healthz"))!.replace(/\/healthz$/, "");
    const ready = (await (await fetch(`${httpBase}/readyz`)).json()) as { ok: boolean };
    expect(ready.ok).toBe(true);
    expect(await (await fetch(`${httpBase}/`)).text()).toContain('<script type="module" src="app.js">');
    expect((await fetch(`${httpBase}/console/`)).status).toBe(200);
    // The binding is found from dist/codecs as from src/codecs (setup.sh builds it).
    expect(stdout).not.toContain("libspeexdsp binding is not built");

    const client = await TalkClient.connect(urls.find((u) => u.endsWith("/talk"))!);
    const speech = await client.request("talk.speak", { text: "Compiled and ready." });
    expect(Buffer.from(speech.audioBase64, "base64").byteLength).toBeGreaterThan(1000);
    await client.close();

    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 240_000);
});
