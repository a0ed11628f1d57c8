import { spawn, execFile, type ChildProcess } from "node:child_process";
import { constants, openSync } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { TalkError } from "../../core/errors.js";
import type {
  ProviderCapabilities,
  ProviderHealth,
  SttProvider,
  SttResult,
  SttStream,
  SttStreamOptions,
} from "../../core/provider-types.js";
import { PCM16_16K } from "../../core/talk-types.js";
import { TailBuffer, terminate, waitForExit, type ChildExit } from "../support/child-process.js";
import { findExecutable } from "../support/find-executable.js";
import { mergeOptions } from "../support/options.js";

const execFileAsync = promisify(execFile);

/** Debian's pocketsphinx-en-us acoustic model, the binary's built-in default. */
export const DEBIAN_EN_US_HMM = "/usr/share/pocketsphinx/model/en-us/en-us";

/** Options of the pocketsphinx speech-to-text provider. */
export interface PocketsphinxSttOptions {
  /** Provider id in the registry and catalog. Default "pocketsphinx". */
  id?: string;
  /** Executable name (looked up on PATH) or absolute path. Default "pocketsphinx_continuous". */
  binary?: string;
  /** Acoustic model directory (-hmm). Default: the binary's own default, Debian's en-us model. */
  hmm?: string;
  /** Language model (-lm). Default: the binary's own default (en-us.lm.bin). */
  lm?: string;
  /** Pronunciation dictionary (-dict). Default: the binary's own default (cmudict-en-us.dict). */
  dict?: string;
  /** Directory in which each stream creates its input FIFO. Default os.tmpdir(). */
  tmpDir?: string;
  /** Time between SIGTERM and SIGKILL when a stream is aborted, ms. Default 200. */
  killGraceMs?: number;
}

const DEFAULTS: Readonly<Required<PocketsphinxSttOptions>> = Object.freeze({
  id: "pocketsphinx",
  binary: "pocketsphinx_continuous",
  hmm: "",
  lm: "",
  dict: "",
  tmpDir: "",
  killGraceMs: 200,
});

/**
 * Speech to text with CMU PocketSphinx, run as `pocketsphinx_continuous` per
 * stream. Local and free, but slow to adapt and inaccurate on open speech: it
 * is the embedded fallback, not a production recognizer.
 *
 * Streaming: pocketsphinx_continuous only reads audio from a file (it fopen()s
 * -infile, so a socket on stdin does not work). Each stream therefore gets a
 * FIFO; we write PCM into it as it arrives and the decoder prints one line per
 * utterance it detects, which we report as partials.
 */
export class PocketsphinxSttProvider implements SttProvider {
  readonly kind = "stt" as const;
  readonly id: string;
  readonly label = "CMU PocketSphinx (local, low accuracy)";
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<Required<PocketsphinxSttOptions>>;

  constructor(options: PocketsphinxSttOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    if (!merged.id) throw new TalkError("config_invalid", "pocketsphinx: id must be a non-empty string");
    if (!merged.binary)
      throw new TalkError("config_invalid", "pocketsphinx: binary must be a non-empty string");
    if (!Number.isInteger(merged.killGraceMs) || merged.killGraceMs < 0) {
      throw new TalkError("config_invalid", "pocketsphinx: killGraceMs must be a non-negative integer");
    }
    this.#options = Object.freeze(merged);
    this.id = merged.id;
    this.capabilities = Object.freeze({
      local: true,
      streaming: true,
      inputFormats: [PCM16_16K],
    });
  }

  async health(): Promise<ProviderHealth> {
    const binary = await findExecutable(this.#options.binary);
    if (!binary) {
      return {
        ok: false,
        detail: `pocketsphinx executable "${this.#options.binary}" not found on PATH; install the Debian package pocketsphinx`,
      };
    }
    const hmm = this.#options.hmm || DEBIAN_EN_US_HMM;
    try {
      await access(join(hmm, "mdef"), constants.R_OK);
    } catch {
      return {
        ok: false,
        detail: `pocketsphinx acoustic model not found at ${hmm}; install the Debian package pocketsphinx-en-us`,
      };
    }
    return { ok: true, detail: `${binary}, model ${hmm}` };
  }

  startStream(options: SttStreamOptions): SttStream {
    const { format } = options;
    if (format.encoding !== "pcm16" || format.sampleRate !== 16_000 || format.channels !== 1) {
      throw new TalkError("invalid_audio", "pocketsphinx needs 16 kHz mono PCM16; resample before writing.", {
        details: { format: { ...format } },
      });
    }
    const args = ["-infile", "<fifo>"];
    if (this.#options.hmm) args.push("-hmm", this.#options.hmm);
    if (this.#options.lm) args.push("-lm", this.#options.lm);
    if (this.#options.dict) args.push("-dict", this.#options.dict);
    return new PocketsphinxStream({
      binary: this.#options.binary,
      args,
      tmpDir: this.#options.tmpDir || tmpdir(),
      killGraceMs: this.#options.killGraceMs,
      signal: options.signal,
      onPartial: options.onPartial,
    });
  }

  async close(): Promise<void> {
    // Nothing long-lived: each stream owns its process.
  }
}

export function createPocketsphinxStt(options: PocketsphinxSttOptions = {}): PocketsphinxSttProvider {
  return new PocketsphinxSttProvider(options);
}

interface StreamSetup {
  binary: string;
  /** Arguments with "<fifo>" standing for the FIFO path. */
  args: string[];
  tmpDir: string;
  killGraceMs: number;
  signal: AbortSignal;
  onPartial: ((text: string) => void) | undefined;
}

type StreamState = "open" | "finishing" | "ended";

class PocketsphinxStream implements SttStream {
  readonly #setup: StreamSetup;
  #state: StreamState = "open";
  /** Audio written before the FIFO is open. */
  #pending: Buffer[] = [];
  #socket: Socket | undefined;
  #child: ChildProcess | undefined;
  #utterances: string[] = [];
  #stdoutRest = "";
  readonly #stderr = new TailBuffer();
  readonly #exit: Promise<ChildExit>;
  #finish: Promise<SttResult> | undefined;
  readonly #onAbort = (): void => this.#abort();

  constructor(setup: StreamSetup) {
    this.#setup = setup;
    if (setup.signal.aborted) {
      this.#state = "ended";
      this.#exit = Promise.resolve({ code: null, signal: null });
      return;
    }
    setup.signal.addEventListener("abort", this.#onAbort, { once: true });
    this.#exit = this.#run().finally(() => setup.signal.removeEventListener("abort", this.#onAbort));
    // finish() may never be called (the turn was dropped); the rejection is reported there when it is.
    this.#exit.catch(() => {});
  }

  write(pcm: Int16Array): void {
    if (this.#state !== "open")
      throw new TalkError("invalid_state", "The STT stream is finished or aborted.");
    if (pcm.length === 0) return;
    // Copied: the caller may reuse its buffer while the write is queued. Host order is little-endian here,
    // which is what pocketsphinx reads from a raw file.
    const bytes = Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    if (this.#socket) this.#socket.write(bytes);
    else this.#pending.push(bytes);
  }

  finish(): Promise<SttResult> {
    this.#finish ??= this.#finishOnce();
    return this.#finish;
  }

  async #finishOnce(): Promise<SttResult> {
    if (this.#state === "open") {
      this.#state = "finishing";
      // End of input is end of file for the decoder once our (only) writer closes.
      if (this.#socket) this.#socket.end();
    }
    const exit = await this.#exit.catch((err: NodeJS.ErrnoException): ChildExit => ({
      code: null,
      signal: null,
      error: err,
    }));
    if (this.#setup.signal.aborted) {
      throw new TalkError("cancelled", "Speech recognition was cancelled.", {
        cause: this.#setup.signal.reason,
      });
    }
    if (exit.error) {
      const code = exit.error.code === "ENOENT" ? "provider_unavailable" : "provider_error";
      throw new TalkError(code, `pocketsphinx could not be started: ${exit.error.message}`, {
        cause: exit.error,
      });
    }
    if (exit.code !== 0) {
      throw new TalkError(
        "provider_error",
        `pocketsphinx exited with ${exit.code ?? exit.signal}: ${lastProblem(this.#stderr.toString())}`,
        {
          details: { exitCode: exit.code, signal: exit.signal },
        },
      );
    }
    this.#takeLine(this.#stdoutRest);
    return { text: this.#utterances.join(" ") };
  }

  #abort(): void {
    this.#state = "ended";
    this.#pending = [];
    this.#socket?.destroy();
    if (this.#child) terminate(this.#child, this.#setup.killGraceMs);
  }

  /** Creates the FIFO, starts the decoder on it, and resolves when the decoder is gone and the FIFO removed. */
  async #run(): Promise<ChildExit> {
    const dir = await mkdtemp(join(this.#setup.tmpDir, "talkgate-sphinx-"));
    try {
      const fifo = join(dir, "input.raw");
      // Node has no mkfifo(); coreutils' mkfifo is as local as the decoder itself.
      await execFileAsync("mkfifo", ["-m", "600", fifo]);
      if (this.#setup.signal.aborted) return { code: null, signal: null };

      const args = this.#setup.args.map((a) => (a === "<fifo>" ? fifo : a));
      const child = spawn(this.#setup.binary, args, { stdio: ["ignore", "pipe", "pipe"] });
      this.#child = child;
      const exited = waitForExit(child);
      child.stdout.setEncoding("utf8").on("data", (d: string) => this.#onStdout(d));
      child.stderr.on("data", (d: Buffer) => this.#stderr.push(d));

      let fd: number | undefined;
      try {
        fd = await openWriterWhenReaderIsOpen(fifo, exited, this.#setup.signal);
      } catch (err) {
        terminate(child, this.#setup.killGraceMs);
        await exited;
        throw err;
      }
      if (fd !== undefined) {
        const socket = new Socket({ fd, readable: false, writable: true });
        socket.on("error", () => {}); // EPIPE when the decoder dies; its exit status reports why
        this.#socket = socket;
        for (const chunk of this.#pending) socket.write(chunk);
        this.#pending = [];
        // Closing the only writer is end of file for the decoder.
        if (this.#state !== "open") socket.end();
      }
      return await exited;
    } finally {
      this.#socket?.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  }

  #onStdout(data: string): void {
    const lines = (this.#stdoutRest + data).split("\n");
    this.#stdoutRest = lines.pop() ?? "";
    let changed = false;
    for (const line of lines) changed = this.#takeLine(line) || changed;
    if (changed && this.#setup.onPartial && !this.#setup.signal.aborted) {
      try {
        this.#setup.onPartial(this.#utterances.join(" "));
      } catch {
        // A listener that throws must not break recognition.
      }
    }
  }

  /** One decoded utterance per stdout line. */
  #takeLine(line: string): boolean {
    const text = line.trim();
    if (!text) return false;
    this.#utterances.push(text);
    return true;
  }
}

/** How often to retry opening the FIFO while the decoder is still loading its model, ms. */
const OPEN_RETRY_MS = 10;

/**
 * Opens the FIFO for writing once the decoder has opened it for reading (it
 * does so after loading its model). A blocking open would park a libuv pool
 * thread for that long, and closing a FIFO before its reader opened it throws
 * the buffered audio away; a non-blocking open fails with ENXIO until the
 * reader is there, so it is retried on a short timer instead. Resolves
 * undefined when the decoder exits or the signal aborts first.
 */
async function openWriterWhenReaderIsOpen(
  fifo: string,
  exited: Promise<ChildExit>,
  signal: AbortSignal,
): Promise<number | undefined> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone || signal.aborted) return undefined;
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
    }
    await new Promise<void>((resolve) => setTimeout(resolve, OPEN_RETRY_MS));
  }
}

/** The decoder logs INFO lines to stderr; the useful part of a failure is the last ERROR/FATAL line. */
function lastProblem(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => /ERROR|FATAL/.test(l));
  return lines.at(-1)?.trim() ?? (stderr.split("\n").at(-1)?.trim() || "no output");
}
