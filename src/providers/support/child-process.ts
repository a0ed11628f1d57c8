import type { ChildProcess } from "node:child_process";

/** How a child process ended. `error` is set when it could not be spawned at all. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: NodeJS.ErrnoException;
}

/**
 * Resolves once the child has exited and its stdio is closed ("close"), or
 * failed to spawn ("error" without a later "close"). Attach it right after
 * spawn so the spawn error is never unhandled.
 */
export function waitForExit(child: ChildProcess): Promise<ChildExit> {
  return new Promise((resolve) => {
    let spawnError: NodeJS.ErrnoException | undefined;
    child.once("error", (err: NodeJS.ErrnoException) => {
      spawnError = err;
      // A child that never spawned emits no "close": settle here.
      if (child.pid === undefined) resolve({ code: null, signal: null, error: err });
    });
    child.once("close", (code, signal) => {
      resolve(spawnError ? { code, signal, error: spawnError } : { code, signal });
    });
  });
}

/**
 * Asks the child to stop (SIGTERM) and makes sure it does (SIGKILL after
 * `graceMs`). Safe to call on a child that already exited.
 */
export function terminate(child: ChildProcess, graceMs: number): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }, graceMs);
  // The timer must not keep the process alive, and is moot once the child is gone.
  timer.unref();
  child.once("exit", () => clearTimeout(timer));
}

/** Keeps the last `limit` characters of a stream (stderr) for error messages. */
export class TailBuffer {
  readonly #limit: number;
  #text = "";

  constructor(limit = 2048) {
    this.#limit = limit;
  }

  push(chunk: Buffer | string): void {
    this.#text = (this.#text + chunk.toString()).slice(-this.#limit);
  }

  toString(): string {
    return this.#text.trim();
  }
}
