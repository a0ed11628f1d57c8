/** Flags of the telephony benches, parsed once: numbers checked, unknown flags refused. */
import { benchParseArgs } from "./bench-cli.js";

export function benchArgs<T extends Record<string, string>>(
  defaults: T,
): { [K in keyof T]: string } & {
  webhook?: string;
  "provider-port"?: string;
  pin?: string;
  "data-dir"?: string;
  "cpu-prof"?: string;
} {
  const options = Object.fromEntries(
    [...Object.keys(defaults), "webhook", "provider-port", "pin", "data-dir", "cpu-prof"].map((k) => [
      k,
      { type: "string" as const, ...(k in defaults ? { default: defaults[k] } : {}) },
    ]),
  );
  // The usage printed for --help is the running bench's (its file is the script node was given).
  const { values } = benchParseArgs(process.argv[1] ?? "", { options, strict: true });
  return values as never;
}

export function num(value: string | undefined, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const fmt = (ms: number): string => (Number.isNaN(ms) ? "-" : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
