/**
 * A bench's command line, parsed as node:util's parseArgs does, with what a person running it expects:
 * `--help` (or `-h`) prints the usage written at the head of the bench's file, and a flag the bench does not
 * take (or a value it lacks) ends the run with that error and a pointer to --help, not a stack trace.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";

/** `file`: the bench's `import.meta.url` (or its path). */
export function benchParseArgs<T extends ParseArgsConfig>(
  file: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const path = file.startsWith("file:") ? fileURLToPath(file) : file;
  const args = config.args ?? process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(benchUsage(path));
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS")) throw err;
    process.stderr.write(
      `${basename(path)}: ${(err as Error).message}\n(run it with --help for its flags)\n`,
    );
    process.exit(2);
  }
}

/** The first doc comment of a bench's file, its `*` margins taken off: its usage, as the file keeps it. */
export function benchUsage(path: string): string {
  const text = readFileSync(path, "utf8");
  const match = /\/\*\*([\s\S]*?)\*\//.exec(text);
  if (!match) return `${basename(path)}: no usage written at its head; read its flags in the file\n`;
  const lines = match[1]!.split("\n").map((line) => line.replace(/^\s*\* ?/, ""));
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() === "") lines.pop();
  return `${lines.join("\n")}\n`;
}
