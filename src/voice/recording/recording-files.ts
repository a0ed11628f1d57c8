/**
 * The recordings directory (`<dataDir>/recordings/`): one `<name>.wav` per
 * call and its `<name>.json` sidecar (who, when, how it ended). Names are
 * made here from the adapter's ids and checked here when an operator asks for
 * one, so nothing outside the directory can be named (no separators, no dots
 * but the extension's).
 */
import { open, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { TalkError } from "../../core/index.js";

/** A recording's name: what the files are called without their extension. */
export const RECORDING_NAME = /^[A-Za-z0-9_-]{1,160}$/;

/** What the sidecar says of a recording (written at start, rewritten at the end). */
export interface RecordingInfo {
  name: string;
  sessionId: string;
  startedAt: string;
  sampleRate: number;
  /** What each channel holds, in order. */
  channels: ["caller", "assistant"];
  state: "recording" | "complete" | "failed";
  endedAt?: string;
  durationMs?: number;
  error?: { code: string; message: string };
  /** The adapter's metadata (carrier, call id, numbers, direction). */
  metadata?: Record<string, string>;
}

/** One entry of a listing: the file, and its sidecar when there is one. */
export interface RecordingEntry {
  name: string;
  file: string;
  bytes: number;
  modifiedAt: string;
  info?: RecordingInfo;
}

export function recordingsDir(dataDir: string): string {
  return join(dataDir, "recordings");
}

/** A file name from ids (e.g. carrier and call id): anything outside [A-Za-z0-9_-] becomes "_". */
export function recordingName(...parts: string[]): string {
  const name = parts
    .map((p) => p.replace(/[^A-Za-z0-9_-]/g, "_"))
    .join("-")
    .slice(0, 160);
  if (!RECORDING_NAME.test(name))
    throw new TalkError("invalid_params", "A recording needs a non-empty name.");
  return name;
}

export async function writeRecordingInfo(dir: string, info: RecordingInfo): Promise<void> {
  await writeFile(join(dir, `${info.name}.json`), `${JSON.stringify(info, null, 2)}\n`);
}

/** The recordings in `dir`, newest first (none when the directory does not exist yet). */
export async function listRecordings(dir: string): Promise<RecordingEntry[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const entries: RecordingEntry[] = [];
  for (const file of names) {
    const name = file.endsWith(".wav") ? file.slice(0, -4) : "";
    if (!RECORDING_NAME.test(name)) continue;
    try {
      const info = await stat(join(dir, file));
      if (!info.isFile()) continue;
      const sidecar = await readInfo(dir, name);
      entries.push({
        name,
        file,
        bytes: info.size,
        modifiedAt: info.mtime.toISOString(),
        ...(sidecar ? { info: sidecar } : {}),
      });
    } catch {
      continue; // removed while listing
    }
  }
  return entries.sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : a.modifiedAt > b.modifiedAt ? -1 : 0));
}

/**
 * Opens the recording `name` (without `.wav`) for reading. `invalid_params`
 * for a name that is not a recording's (a path, `..`), `recording_not_found`
 * when there is no such regular file.
 */
export async function openRecording(
  dir: string,
  name: string,
): Promise<{ path: string; bytes: number; read(offset: number, length: number): Promise<Uint8Array> }> {
  if (typeof name !== "string" || !RECORDING_NAME.test(name))
    throw new TalkError("invalid_params", "A recording name is 1-160 characters of [A-Za-z0-9_-].");
  const path = join(dir, `${name}.wav`);
  let bytes: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error("not a regular file");
    bytes = info.size;
  } catch (err) {
    throw new TalkError("recording_not_found", `No recording named ${name}.`, { cause: err });
  }
  return {
    path,
    bytes,
    async read(offset, length) {
      const file = await open(path, "r");
      try {
        const out = new Uint8Array(Math.max(0, Math.min(length, bytes - offset)));
        const { bytesRead } = await file.read(out, 0, out.byteLength, offset);
        return out.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    },
  };
}

async function readInfo(dir: string, name: string): Promise<RecordingInfo | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, `${name}.json`), "utf8")) as RecordingInfo;
  } catch {
    return undefined;
  }
}
