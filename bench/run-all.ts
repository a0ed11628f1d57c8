/**
 * `npm run bench`: every bench/*.bench.ts in sequence, each in its own child
 * process with quick settings (the full figures need each bench's own
 * flags; see docs/performance.md). A bench that fails or overruns its time
 * limit is reported and the rest still run. Exit code 1 if any failed.
 *
 *   node --import tsx bench/run-all.ts [--only telephony]
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { benchParseArgs } from "./lib/bench-cli.js";

/** Quick settings per bench (file name -> args); benches not listed run with their defaults. */
const QUICK: Record<string, string[]> = {
  "codecs.bench.ts": ["--processes", "1", "--ms", "100"],
  "brain.bench.ts": ["--seconds", "3", "--throughput-mb", "1"],
  "cluster-relay.bench.ts": ["--frames", "1000", "--rounds", "1"],
  "meetings.bench.ts": ["--seconds", "10", "--max-bots", "1"],
  "telephony-capacity.bench.ts": ["--calls", "300", "--seconds", "3"],
  "telephony-carriers.bench.ts": ["--calls", "20", "--seconds", "2", "--settle-seconds", "2"],
  "telephony-barge-in.bench.ts": ["--calls", "50", "--rounds", "200"],
  "telephony-memory.bench.ts": ["--calls", "1000", "--flow-seconds", "2"],
  "telephony-faults.bench.ts": ["--rounds", "10"],
  "slow-readers.bench.ts": ["--requests", "100"],
  "turn-taking.bench.ts": ["--quick", "--configs", "baseline,ec"],
  "moonshine-pause-final.bench.ts": ["--snrs", "30"],
  "web-page-input.bench.ts": ["--seconds", "3"],
  "twilio-frame-parse.bench.ts": ["--frames", "50000", "--rounds", "3"],
  "replay-ring-gc.bench.ts": ["--calls", "50"],
};
/** Upper bound per bench, ms: an overrun is killed and reported. */
const LIMIT_MS = 120_000;

const { values } = benchParseArgs(import.meta.url, { options: { only: { type: "string" } } });
const dir = import.meta.dirname;
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => values.only === undefined || f.includes(values.only))
  .sort();

const results: Array<{ bench: string; ok: boolean; seconds: number; why?: string }> = [];
for (const bench of benches) {
  const args = QUICK[bench] ?? [];
  process.stdout.write(`\n=== ${bench} ${args.join(" ")}\n`);
  const started = performance.now();
  const outcome = await new Promise<{ ok: boolean; why?: string }>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(dir, bench), ...args], {
      stdio: "inherit",
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ ok: false, why: `killed after ${LIMIT_MS / 1000} s` });
    }, LIMIT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(
        code === 0 ? { ok: true } : { ok: false, why: signal ? `signal ${signal}` : `exit code ${code}` },
      );
    });
  });
  results.push({ bench, ...outcome, seconds: (performance.now() - started) / 1000 });
}

process.stdout.write("\n=== summary\n");
for (const r of results)
  process.stdout.write(
    `${r.ok ? "ok  " : "FAIL"} ${r.bench} (${r.seconds.toFixed(0)} s)${r.why ? `: ${r.why}` : ""}\n`,
  );
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
