import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { migrateLegacyRealtime, type LegacyMove } from "./legacy-realtime.js";
import { validateConfig } from "./load-config.js";
import type { TalkgateConfig } from "./config-schema.js";
import { isTalkError } from "../core/index.js";

export interface DoctorOptions {
  path: string;
  /** Report only; do not write the file. */
  dryRun?: boolean;
  /** The environment `serve` would read (its keys count as configured). Default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * The checks `serve` runs on the validated configuration when it builds its providers (a
   * `talk.provider` or `talk.realtime.provider` that names no configured provider); a thrown
   * error is a problem. The caller passes the app's own check, so both refuse the same files.
   */
  checkProviders?: (config: TalkgateConfig) => void;
}

export interface DoctorReport {
  path: string;
  moves: LegacyMove[];
  conflicts: LegacyMove[];
  written: boolean;
  backupPath?: string;
  /** Problems that remain after migration (validation errors), one per line. */
  problems: string[];
  /** What `serve` would warn about at start-up. */
  warnings: string[];
}

/**
 * `talkgate doctor`: moves legacy realtime placement into talk.realtime,
 * keeps a backup of the original file, and validates the result. Start-up
 * never does this; only an operator running doctor changes a config file.
 */
export function runDoctor(options: DoctorOptions): DoctorReport {
  const path = resolve(options.path);
  const raw = JSON.parse(readFileSync(path, "utf8")) as unknown;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return {
      path,
      moves: [],
      conflicts: [],
      written: false,
      problems: ["(root): the configuration must be a JSON object"],
      warnings: [],
    };
  }
  const { config, moves, conflicts } = migrateLegacyRealtime(raw as Record<string, unknown>);
  let problems: string[] = [];
  let warnings: string[] = [];
  try {
    // The same validation as `serve`, over the same environment, so both agree on a file.
    const loaded = validateConfig(config, { env: options.env ?? process.env, path });
    warnings = loaded.warnings;
    options.checkProviders?.(loaded.config);
  } catch (err) {
    problems =
      isTalkError(err) && Array.isArray(err.details?.problems)
        ? (err.details.problems as string[])
        : [isTalkError(err) ? err.message : String(err)];
  }
  const changed = moves.length > 0 || conflicts.length > 0;
  if (!changed || options.dryRun) return { path, moves, conflicts, written: false, problems, warnings };
  const backupPath = `${path}.bak`;
  copyFileSync(path, backupPath);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return { path, moves, conflicts, written: true, backupPath, problems, warnings };
}

export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [`talkgate doctor: ${report.path}`];
  if (report.moves.length === 0 && report.conflicts.length === 0)
    lines.push("  no legacy realtime placement found");
  for (const m of report.moves) lines.push(`  moved ${m.from} -> ${m.to}`);
  for (const c of report.conflicts) lines.push(`  dropped ${c.from} (already set at ${c.to})`);
  if (report.written) lines.push(`  wrote ${report.path} (original kept at ${report.backupPath})`);
  else if (report.moves.length > 0 || report.conflicts.length > 0) lines.push("  dry run: nothing written");
  if (report.problems.length > 0) {
    lines.push("  remaining problems:");
    for (const p of report.problems) lines.push(`    - ${p}`);
  } else lines.push("  configuration is valid");
  for (const w of report.warnings) lines.push(`  warning: ${w}`);
  return lines.join("\n");
}
