/**
 * vitest global setup: turns the stand-ins' wire capture on for the run
 * (TALKGATE_WIRE_CAPTURE_DIR, inherited by the test processes) and, once
 * every test has run, type-checks what was captured against the vendors' SDKs
 * (wire-types.ts). A type error fails the run (exit code 1) with tsc's
 * messages; a run that reached no provider checks nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WIRE_CAPTURE_ENV } from "../support/wire-capture.js";
import { capped, collect, generate, typeCheck, VENDORS, versionOf } from "./wire-types.js";

export default function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-wire-"));
  process.env[WIRE_CAPTURE_ENV] = dir;
  return async () => {
    try {
      const all = collect(dir);
      if (all.length === 0) return;
      const messages = capped(all);
      const versions = `openai ${versionOf("openai")}, @google/genai ${versionOf("@google/genai")}`;
      const counts = VENDORS.filter((v) => messages.some((m) => m.vendor === v))
        .map((v) => `${messages.filter((m) => m.vendor === v).length} ${v}`)
        .join(", ");
      const result = await typeCheck(
        generate(messages, `${counts} (of ${all.length} distinct); ${versions}`),
        "client-messages",
      );
      if (result.ok) {
        process.stdout.write(`\nwire types: ${counts} client messages type-check against ${versions}\n`);
        return;
      }
      process.exitCode = 1;
      process.stderr.write(
        `\nwire types: FAILED: client messages the suite sent do not type-check against ${versions} (${result.file}):\n${result.output}\n`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
