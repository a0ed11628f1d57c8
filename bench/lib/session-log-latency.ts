/**
 * The relay's own latency figures as it measured them: `latency.metrics`
 * events of one name (e.g. barge_in_to_clear: provider event in -> clear
 * written) read back from a bench server's session logs (`<dataDir>/sessions`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Values (ms, sorted) of the `latency.metrics` events named `name` in the session logs under `dataDir`. */
export function sessionLogLatencies(dataDir: string | undefined, name: string): number[] {
  if (!dataDir) return [];
  const dir = join(dataDir, "sessions");
  const out: number[] = [];
  for (const file of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (!line.includes(name)) continue;
      const ms = (JSON.parse(line) as { payload?: { ms?: unknown } }).payload?.ms;
      if (typeof ms === "number") out.push(ms);
    }
  }
  return out.sort((a, b) => a - b);
}
