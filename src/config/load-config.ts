import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { z } from "zod";
import { TalkError } from "../core/index.js";
import { configSchema, type TalkgateConfig } from "./config-schema.js";
import { applyEnvironment } from "./environment.js";
import { findLegacyRealtimeKeys } from "./legacy-realtime.js";
import { checkProviders } from "./provider-checks.js";

export interface LoadConfigOptions {
  /** Path of a JSON config file (`--config`); falls back to TALKGATE_CONFIG; none means embedded defaults. */
  path?: string;
  /** Environment to read overrides from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface LoadedConfig {
  config: TalkgateConfig;
  /** The file read, if any. */
  path: string | undefined;
  /** Keys set from the environment, for the start-up log (names only, never values). */
  envOverrides: string[];
  /** What start-up logs as warnings (a provider without its key: provider-checks.ts). */
  warnings: string[];
}

/**
 * Reads, overrides and validates the configuration. Never rewrites the file:
 * legacy layouts are reported with a pointer to `talkgate doctor`.
 * Throws a TalkError `config_invalid` whose message names every bad key.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const path = options.path ?? (env.TALKGATE_CONFIG ? env.TALKGATE_CONFIG : undefined);
  const raw = path === undefined ? {} : readConfigFile(path);
  return validateConfig(raw, { env, path });
}

export function validateConfig(
  raw: unknown,
  options: { env?: NodeJS.ProcessEnv; path?: string } = {},
): LoadedConfig {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw configError(["(root): the configuration must be a JSON object"], options.path);
  }
  const legacy = findLegacyRealtimeKeys(raw as Record<string, unknown>);
  if (legacy.length > 0) {
    throw configError(
      legacy.map(
        (k) => `${k}: legacy realtime placement; run \`talkgate doctor\` to move it into talk.realtime`,
      ),
      options.path,
    );
  }
  const { value, applied, errors } = applyEnvironment(
    structuredClone(raw) as Record<string, unknown>,
    options.env ?? {},
  );
  if (errors.length > 0) throw configError(errors, options.path);
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) throw configError(formatIssues(parsed.error.issues), options.path);
  const { errors: problems, warnings } = checkProviders(parsed.data);
  if (problems.length > 0) throw configError(problems, options.path);
  return { config: parsed.data, path: options.path, envOverrides: applied, warnings };
}

function readConfigFile(path: string): unknown {
  const abs = resolve(path);
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    throw new TalkError("config_invalid", `cannot read config file ${abs}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TalkError("config_invalid", `config file ${abs} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const at = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) lines.push(`${at ? `${at}.` : ""}${key}: unknown key`);
    } else {
      lines.push(`${at || "(root)"}: ${issue.message}`);
    }
  }
  return lines;
}

function configError(lines: string[], path: string | undefined): TalkError {
  const where = path ? ` (${path})` : "";
  return new TalkError("config_invalid", `invalid configuration${where}:\n  - ${lines.join("\n  - ")}`, {
    details: { problems: lines },
  });
}
