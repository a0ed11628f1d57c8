import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../config/index.js";
import { createAppLogger, type AppLoggerOptions } from "./logger.js";

const PLANTED = "PLANTED-LOG-SECRET-42";

function capture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, destination };
}

function logSome(options: Omit<AppLoggerOptions, "destination">): string[] {
  const { lines, destination } = capture();
  const logger = createAppLogger({ ...options, destination });
  logger.info(
    {
      url: `https://h.example/v1?api_key=${PLANTED}`,
      settings: { headers: { Authorization: `Bearer ${PLANTED}` }, secretAccessKey: PLANTED },
      err: new Error(`POST https://user:${PLANTED}@h.example/x failed`),
    },
    `calling https://h.example/v1?key=${PLANTED}`,
  );
  logger.child({ component: "x" }).warn({ apiKeys: [PLANTED] }, "child line");
  return lines;
}

describe("createAppLogger", () => {
  it("redacts every line: secret names, URL credentials and queries, error messages and the message text", async () => {
    const lines = logSome({ level: "info" });
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(PLANTED);
    const first = JSON.parse(lines[0] as string) as { err: { message: string }; msg: string };
    expect(first.err.message).toContain("failed");
    expect(first.msg).toContain("https://h.example/v1?[redacted]");
  });

  it("writes readable lines (time, level, message) when pretty, redacted the same way", async () => {
    const lines = logSome({ level: "info", format: "pretty", isTerminal: false });
    await new Promise((r) => setImmediate(r));
    const text = lines.join("\n");
    expect(text).not.toContain(PLANTED);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: calling https:\/\/h\.example\/v1\?\[redacted\]/,
    );
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: child line/m);
    // No colour codes when the destination is not a terminal, and not JSON.
    expect(text).not.toContain("\u001b[");
    expect(() => JSON.parse(lines[0] as string) as unknown).toThrow();
  });

  it('"auto" is readable on a terminal and JSON elsewhere', async () => {
    const onTerminal = logSome({ level: "info", format: "auto", isTerminal: true });
    const piped = logSome({ level: "info", format: "auto", isTerminal: false });
    await new Promise((r) => setImmediate(r));
    expect(onTerminal[0]).toContain("INFO");
    expect(onTerminal[0]?.startsWith("{")).toBe(false);
    expect((JSON.parse(piped[0] as string) as { level: number }).level).toBe(30);
    const asked = logSome({ level: "info", format: "json", isTerminal: true });
    expect((JSON.parse(asked[0] as string) as { level: number }).level).toBe(30);
  });

  it("takes its format from log.format or LOG_FORMAT, auto by default, and refuses others naming the variable", () => {
    expect(validateConfig({}).config.log.format).toBe("auto");
    expect(validateConfig({}, { env: { LOG_FORMAT: "json" } }).config.log.format).toBe("json");
    expect(validateConfig({ log: { format: "pretty" } }).config.log.format).toBe("pretty");
    expect(() => validateConfig({}, { env: { LOG_FORMAT: "yaml" } })).toThrow(/log\.format/);
  });
});
