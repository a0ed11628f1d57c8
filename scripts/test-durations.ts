// Refreshes test/support/file-durations.json, the table the test sequencer orders files by
// (longest first), from a vitest JSON report:
//   npx vitest run --reporter=default --reporter=json --outputFile=/tmp/vitest.json
//   npm run test:durations -- /tmp/vitest.json
// Durations are rounded to 100 ms; only the order matters, and a run on a loaded machine
// inflates every file alike.
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";

interface JsonReport {
  testResults: { name: string; startTime: number; endTime: number }[];
}

const reportPath = process.argv[2];
if (!reportPath) {
  process.stderr.write("usage: node --import tsx scripts/test-durations.ts <vitest JSON report>\n");
  process.exit(2);
}
const root = resolve(import.meta.dirname, "..");
const report = JSON.parse(readFileSync(reportPath, "utf8")) as JsonReport;
const table: Record<string, number> = {};
for (const file of report.testResults) {
  // Keyed from src/ or test/ on, so a report written in another checkout of the project reads the same.
  const path = /(?:^|\/)((?:src|test)\/.+)$/.exec(file.name)?.[1] ?? relative(root, file.name);
  table[path] = Math.round((file.endTime - file.startTime) / 100) * 100;
}
const sorted = Object.fromEntries(Object.entries(table).sort(([, a], [, b]) => b - a));
const out = resolve(root, "test/support/file-durations.json");
writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
process.stdout.write(`${Object.keys(sorted).length} files written to ${relative(root, out)}\n`);
