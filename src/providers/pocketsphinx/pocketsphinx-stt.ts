import { spawn, execFile, type ChildProcess } from "node:child_process";
import { constants, openSync } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { TalkError } from "../../core/index.js";
import type {
  ProviderCapabilities,
  ProviderHealth,
  SttProvider,
  SttResult,
  SttStream,
  SttStreamOptions,
} from "../../core/index.js";
import { PCM16_16K } from "../../core/index.js";
import { TailBuffer, terminate, waitForExit, type ChildExit } from "../support/child-process.js";
import { findExecutable } from "../support/find-executable.js";
import { mergeOptions } from "../support/options.js";
import { DecoderPool, ResidentStream, lastProblem } from "./resident-decoder.js";
import { SEARCH_PRESETS, sphinxArgs, type SphinxParam, type SphinxSearch } from "./sphinx-params.js";

const execFileAsync = promisify(execFile);

/** Debian's pocketsphinx-en-us acoustic model, the binary's built-in default. */
export const DEBIAN_EN_US_HMM = "/usr/share/pocketsphinx/model/en-us/en-us";
/** Debian's pocketsphinx-en-us language model and dictionary (the binary's built-in defaults). */
export const DEBIAN_EN_US_LM = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";
export const DEBIAN_EN_US_DICT = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";
/** Where Debian's python3-pocketsphinx puts the binding the resident decoder imports. */
const DEBIAN_PYTHON_BINDING = "/usr/lib/python3/dist-packages/pocketsphinx/__init__.py";

/**
 * How streams are decoded:
 * - `"resident"`: long-lived decoder processes (Python with Debian's
 *   pocketsphinx binding) that load the models once and decode one stream
 *   after another; a stream borrows an idle one or starts one.
 * - `"per-stream"`: one `pocketsphinx_continuous` process per stream, which
 *   loads the models (about 0.35 s of CPU) every time.
 */
export type PocketsphinxDecoderMode = "resident" | "per-stream";
export type { SphinxSearch } from "./sphinx-params.js";

/** Options of the pocketsphinx speech-to-text provider. */
export interface PocketsphinxSttOptions {
  /** Provider id in the registry and catalog. Default "pocketsphinx". */
  id?: string;
  /** How streams are decoded (see PocketsphinxDecoderMode). Default "resident". */
  decoder?: PocketsphinxDecoderMode;
  /**
   * Search settings: "full" (pocketsphinx's defaults) or "fast" (see SphinxSearch). Default "fast" for
   * resident decoders (measured: same accuracy on the test recordings, ~60% of the CPU), "full" per stream
   * (where "fast" measured less accurate).
   */
  search?: SphinxSearch;
  /** Per-stream mode: executable name (looked up on PATH) or absolute path. Default "pocketsphinx_continuous". */
  binary?: string;
  /** Resident mode: a Python 3 that has the pocketsphinx binding. Default "/usr/bin/python3" (Debian's). */
  python?: string;
  /** Resident mode: idle decoders kept loaded for later streams (each holds ~90 MB). Default 4. */
  maxIdleDecoders?: number;
  /** Resident mode: an idle decoder exits after this long unused, ms. Default 120000. */
  idleTimeoutMs?: number;
  /** Acoustic model directory (-hmm). Default: the binary's own default, Debian's en-us model. */
  hmm?: string;
  /** Language model (-lm). Default: the binary's own default (en-us.lm.bin). */
  lm?: string;
  /** Pronunciation dictionary (-dict). Default: the binary's own default (cmudict-en-us.dict). */
  dict?: string;
  /**
   * Resident mode: load the dictionary restricted to the language model's words (the n-gram search never
   * proposes the others): ~13 MB less per decoder with Debian's en-us model, same results on the test
   * recordings. The restricted copy is written once under `tmpDir`. Default true.
   */
  lmOnlyDict?: boolean;
  /**
   * Per-stream mode: directory in which each stream creates its input FIFO; resident mode: where the
   * `lmOnlyDict` copy is cached. Default os.tmpdir().
   */
  tmpDir?: string;
  /** Time between SIGTERM and SIGKILL when a decoder is stopped, ms. Default 200. */
  killGraceMs?: number;
  /**
   * Resident mode, streams that ask for running hypotheses (`eagerPartials`: a barge-in confirmed by
   * words): inside an utterance, the running hypothesis every this much audio, ms (0: only when the
   * decoder's own detector ends the utterance, at a pause). Other streams get ended utterances only: on
   * a turn's own stream, words this early shortened the adaptive end of turn into more cut-offs. Default 500.
   */
  partialIntervalMs?: number;
}

const DEFAULTS: Readonly<Required<PocketsphinxSttOptions>> = Object.freeze({
  id: "pocketsphinx",
  decoder: "resident",
  search: "fast",
  binary: "pocketsphinx_continuous",
  python: "/usr/bin/python3",
  maxIdleDecoders: 4,
  idleTimeoutMs: 120_000,
  hmm: "",
  lm: "",
  dict: "",
  lmOnlyDict: true,
  tmpDir: "",
  killGraceMs: 200,
  partialIntervalMs: 500,
});

/**
 * Speech to text with CMU PocketSphinx. Local and free, but slow to adapt and
 * inaccurate on open speech: it is the embedded fallback, not a production
 * recognizer.
 *
 * Resident mode (default): a pool of long-lived decoder processes
 * (`sphinx-decoder.py`, Debian's Python binding of the same library) that load
 * the models once; a stream borrows one for its life and gives it back when
 * its result is in. The decoder segments a stream into utterances like
 * pocketsphinx_continuous and reports each as a partial.
 *
 * Per-stream mode: pocketsphinx_continuous only reads audio from a file (it
 * fopen()s -infile, so a socket on stdin does not work). Each stream therefore
 * gets a FIFO; we write PCM into it as it arrives and the decoder prints one
 * line per utterance it detects, which we report as partials.
 */
export class PocketsphinxSttProvider implements SttProvider {
  readonly kind = "stt" as const;
  readonly id: string;
  readonly label = "CMU PocketSphinx (local, low accuracy)";
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<Required<PocketsphinxSttOptions>>;
  readonly #pool: DecoderPool | undefined;

  constructor(options: PocketsphinxSttOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    if (options.search === undefined && merged.decoder === "per-stream") merged.search = "full";
    if (!merged.id) throw new TalkError("config_invalid", "pocketsphinx: id must be a non-empty string");
    if (!merged.binary)
      throw new TalkError("config_invalid", "pocketsphinx: binary must be a non-empty string");
    if (!Number.isInteger(merged.killGraceMs) || merged.killGraceMs < 0) {
      throw new TalkError("config_invalid", "pocketsphinx: killGraceMs must be a non-negative integer");
    }
    if (merged.decoder !== "resident" && merged.decoder !== "per-stream")
      throw new TalkError("config_invalid", 'pocketsphinx: decoder must be "resident" or "per-stream"');
    if (!(merged.search in SEARCH_PRESETS))
      throw new TalkError("config_invalid", 'pocketsphinx: search must be "full" or "fast"');
    if (!merged.python)
      throw new TalkError("config_invalid", "pocketsphinx: python must be a non-empty string");
    if (!Number.isInteger(merged.maxIdleDecoders) || merged.maxIdleDecoders < 0)
      throw new TalkError("config_invalid", "pocketsphinx: maxIdleDecoders must be a non-negative integer");
    if (!Number.isInteger(merged.idleTimeoutMs) || merged.idleTimeoutMs < 0)
      throw new TalkError("config_invalid", "pocketsphinx: idleTimeoutMs must be a non-negative integer");
    if (typeof merged.lmOnlyDict !== "boolean")
      throw new TalkError("config_invalid", "pocketsphinx: lmOnlyDict must be a boolean");
    if (
      !Number.isInteger(merged.partialIntervalMs) ||
      merged.partialIntervalMs < 0 ||
      merged.partialIntervalMs > 10_000
    )
      throw new TalkError(
        "config_invalid",
        "pocketsphinx: partialIntervalMs must be an integer from 0 to 10000",
      );
    this.#options = Object.freeze(merged);
    if (merged.decoder === "resident") {
      this.#pool = new DecoderPool({
        python: merged.python,
        params: this.#params(true),
        killGraceMs: merged.killGraceMs,
        ...(merged.lmOnlyDict ? { lmOnlyDictDir: merged.tmpDir || tmpdir() } : {}),
        maxIdle: merged.maxIdleDecoders,
        idleTimeoutMs: merged.idleTimeoutMs,
      });
    }
    this.id = merged.id;
    this.capabilities = Object.freeze({
      local: true,
      streaming: true,
      inputFormats: [PCM16_16K],
    });
  }

  /** Live resident decoder processes, idle or busy (0 in per-stream mode). */
  get residentDecoders(): number {
    return this.#pool?.size ?? 0;
  }

  async health(): Promise<ProviderHealth> {
    const resident = this.#options.decoder === "resident";
    const executable = resident ? this.#options.python : this.#options.binary;
    const binary = await findExecutable(executable);
    if (!binary) {
      return {
        ok: false,
        detail: resident
          ? `python "${executable}" not found; install the Debian packages python3 and python3-pocketsphinx`
          : `pocketsphinx executable "${executable}" not found on PATH; install the Debian package pocketsphinx`,
      };
    }
    if (resident && this.#options.python === DEFAULTS.python) {
      try {
        await access(DEBIAN_PYTHON_BINDING, constants.R_OK);
      } catch {
        return {
          ok: false,
          detail:
            "the pocketsphinx Python binding is missing; install the Debian package python3-pocketsphinx",
        };
      }
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
    return {
      ok: true,
      detail: `${resident ? "resident decoders" : binary}, model ${hmm}, search ${this.#options.search}`,
    };
  }

  startStream(options: SttStreamOptions): SttStream {
    const { format } = options;
    if (format.encoding !== "pcm16" || format.sampleRate !== 16_000 || format.channels !== 1) {
      throw new TalkError("invalid_audio", "pocketsphinx needs 16 kHz mono PCM16; resample before writing.", {
        details: { format: { ...format } },
      });
    }
    if (this.#pool)
      return new ResidentStream(
        this.#pool,
        options.signal,
        options.onPartial,
        options.eagerPartials ? this.#options.partialIntervalMs : 0,
      );
    const args = ["-infile", "<fifo>", ...sphinxArgs(this.#params(false))];
    return new PocketsphinxStream({
      binary: this.#options.binary,
      args,
      tmpDir: this.#options.tmpDir || tmpdir(),
      killGraceMs: this.#options.killGraceMs,
      signal: options.signal,
      onPartial: options.onPartial,
    });
  }

  /** Ends the resident decoders (idle and busy). Idempotent; later streams still work, unpooled. */
  close(): Promise<void> {
    return this.#pool?.close() ?? Promise.resolve();
  }

  /** Model and search settings. The library has no model defaults (the binary does): resident mode names them. */
  #params(withModelDefaults: boolean): SphinxParam[] {
    const o = this.#options;
    const model = (name: string, value: string, fallback: string): SphinxParam[] =>
      value || withModelDefaults ? [{ name, type: "string", value: value || fallback }] : [];
    return [
      ...model("hmm", o.hmm, DEBIAN_EN_US_HMM),
      ...model("lm", o.lm, DEBIAN_EN_US_LM),
      ...model("dict", o.dict, DEBIAN_EN_US_DICT),
      ...SEARCH_PRESETS[o.search],
    ];
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
