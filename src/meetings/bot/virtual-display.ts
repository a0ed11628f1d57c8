import { spawn, type ChildProcess } from "node:child_process";
import { TalkError } from "../../core/index.js";

/**
 * An X virtual framebuffer (Debian's `xvfb`) for headed bot browsers. The
 * display number is chosen by the server itself (`-displayfd`), so parallel
 * tests, engineers and workers on one machine never collide on `:99`.
 */
export interface VirtualDisplay {
  /** `:<n>`, for DISPLAY. */
  readonly display: string;
  readonly pid: number | undefined;
  /** Stops Xvfb. Idempotent. */
  close(): Promise<void>;
}

export interface XvfbOptions {
  /** Default "/usr/bin/Xvfb". */
  executablePath?: string;
  /** Screen geometry. Default "1280x720x24": Meet, Zoom and Teams lay out for a 720p window. */
  screen?: string;
  /** Bound on Xvfb's start, ms. Default 10 000. */
  startTimeoutMs?: number;
}

/** Starts Xvfb on a display number of its own choosing and answers once it accepts clients. */
export async function startXvfb(options: XvfbOptions = {}): Promise<VirtualDisplay> {
  const executable = options.executablePath ?? "/usr/bin/Xvfb";
  // Through a small shell watchdog: Xvfb goes when this process goes, even if it dies without closing it
  // (SIGKILL, a crash), and when the watchdog is told to stop (close()).
  const watchdog = `"$0" "$@" & x=$!; trap 'kill $x 2>/dev/null; exit 0' TERM INT; while kill -0 ${process.pid} 2>/dev/null && kill -0 $x 2>/dev/null; do sleep 1 & wait $!; done; kill $x 2>/dev/null`;
  const child = spawn(
    "/bin/sh",
    [
      "-c",
      watchdog,
      executable,
      "-displayfd",
      "3",
      "-screen",
      "0",
      options.screen ?? "1280x720x24",
      "-nolisten",
      "tcp",
      // No access control prompt, no reset when the last client leaves (a shared display outlives its bots).
      "-ac",
      "-noreset",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe"], detached: false },
  );
  const display = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(
      () => fail(`no display number within ${options.startTimeoutMs ?? 10_000} ms`),
      options.startTimeoutMs ?? 10_000,
    );
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(
        new TalkError("provider_unavailable", `Xvfb did not start (${executable}): ${why}`, {
          details: { stderr: err.slice(-500) },
        }),
      );
    };
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const fd = child.stdio[3] as NodeJS.ReadableStream;
    fd.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`:${m[1]}`);
      }
    });
    child.once("error", (e) => fail(e.message));
    child.once("exit", (code, signal) => fail(`exited (${code ?? signal})`));
  });
  child.removeAllListeners("exit");
  return new XvfbProcess(child, display);
}

class XvfbProcess implements VirtualDisplay {
  readonly display: string;
  readonly pid: number | undefined;
  readonly #child: ChildProcess;
  #closing: Promise<void> | undefined;

  constructor(child: ChildProcess, display: string) {
    this.#child = child;
    this.display = display;
    this.pid = child.pid;
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const child = this.#child;
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
    return this.#closing;
  }
}

/**
 * Displays for bot browsers: one shared Xvfb for every bot of the process
 * (`shared`, the default: measured in bench/meetings.bench.ts, docs/performance.md
 * "Meetings"), or one Xvfb per bot (`per-bot`). The shared display starts
 * with the first bot and stops when the last one has closed.
 */
export class DisplayPool {
  readonly mode: "shared" | "per-bot";
  readonly #options: XvfbOptions;
  #shared: Promise<VirtualDisplay> | undefined;
  #users = 0;

  constructor(mode: "shared" | "per-bot" = "shared", options: XvfbOptions = {}) {
    this.mode = mode;
    this.#options = options;
  }

  /** A display for one browser; `release` when the browser is gone. */
  async acquire(): Promise<{ display: string; release(): Promise<void> }> {
    if (this.mode === "per-bot") {
      const own = await startXvfb(this.#options);
      return { display: own.display, release: () => own.close() };
    }
    this.#users++;
    try {
      this.#shared ??= startXvfb(this.#options);
      const shared = await this.#shared;
      let released = false;
      return {
        display: shared.display,
        release: async () => {
          if (released) return;
          released = true;
          await this.#drop();
        },
      };
    } catch (err) {
      this.#shared = undefined;
      this.#users--;
      throw err;
    }
  }

  async #drop(): Promise<void> {
    if (--this.#users > 0) return;
    const shared = this.#shared;
    this.#shared = undefined;
    if (shared) await (await shared).close();
  }
}
