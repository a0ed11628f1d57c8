import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { benchUsage } from "../../bench/lib/bench-cli.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bench = (file: string, ...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000,
  });

describe("a bench's command line (bench/lib/bench-cli.ts)", () => {
  it("--help prints the usage at the head of the bench's file and runs nothing", () => {
    const r = bench("bench/onset-latency.bench.ts", "--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("node --import tsx bench/onset-latency.bench.ts");
    expect(r.stdout).not.toContain("onset-latency: seeds");
    expect(r.stdout).not.toMatch(/^\s*\*/m);
  });

  it("an unknown flag or a missing value ends the run with the error and a pointer to --help, no stack trace", () => {
    for (const args of [["--bogus"], ["--seeds"]]) {
      const r = bench("bench/onset-latency.bench.ts", ...args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(
        /^onset-latency\.bench\.ts: (Unknown option '--bogus'|Option '--seeds <value>' argument missing)/,
      );
      expect(r.stderr).toContain("--help");
      expect(r.stderr).not.toContain("    at ");
    }
  });

  it("onset-latency refuses an empty or negative answer start before running anything", () => {
    for (const [value, message] of [
      ["400,", "--answer-start-ms takes ms after the call connects"],
      ["400,-5", "--answer-start-ms must be a number >= 0"],
    ]) {
      const r = bench("bench/onset-latency.bench.ts", "--grid", `--answer-start-ms=${value}`);
      expect(r.status, value).not.toBe(0);
      expect(r.stderr, value).toContain(message);
      expect(r.stdout, value).not.toContain("onset-latency: seeds");
    }
  });

  it("the telephony benches' shared flags (benchArgs) print their own bench's usage", () => {
    const r = bench("bench/echo-canceller.bench.ts", "--help");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("The echo canceller's cost per call");
  });

  it("every bench has its usage written at its head", async () => {
    const { readdirSync } = await import("node:fs");
    const files = readdirSync(`${root}bench`).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) expect(benchUsage(`${root}bench/${f}`), f).not.toContain("no usage written");
  });
});
