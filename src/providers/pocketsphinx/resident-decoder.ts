import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TalkError } from "../../core/index.js";
import type { SttResult, SttStream } from "../../core/index.js";
import { TailBuffer, terminate, waitForExit, type ChildExit } from "../support/child-process.js";
import type { SphinxParam } from "./sphinx-params.js";

/** The helper run by Python: loads the models once, then decodes stream after stream (see its docstring). */
export const SPHINX_DECODER_SCRIPT = fileURLToPath(new URL("./sphinx-decoder.py", import.meta.url));

/** Frame kinds on the helper's stdin. */
const START = 1;
const AUDIO = 2;
const END = 3;

export interface ResidentDecoderSetup {
  /** Python interpreter that has the pocketsphinx binding (Debian: /usr/bin/python3 + python3-pocketsphinx). */
  python: string;
  params: readonly SphinxParam[];
  killGraceMs: number;
  /**
   * When set, the decoder loads the dictionary restricted to the language model's words (~13 MB less per
   * decoder with Debian's en-us model, same results), cached in a private subdirectory of this directory.
   */
  lmOnlyDictDir?: string;
}

/** What the decoder reports about the stream it is decoding. */
interface StreamListener {
  /** The utterance in progress so far (changed since the last report). */
  onRunning?(text: string): void;
  onUtterance(text: string): void;
  onDone(): void;
}

/**
 * One long-lived decoder process: models loaded once, one stream at a time.
 * Input that arrives while the models load waits in the pipe.
 */
export class ResidentDecoder {
  readonly #child: ChildProcess;
  readonly #stderr = new TailBuffer();
  readonly #killGraceMs: number;
  readonly exited: Promise<ChildExit>;
  #ready = false;
  #stdoutRest = "";
  #listener: StreamListener | undefined;

  constructor(setup: ResidentDecoderSetup) {
    this.#killGraceMs = setup.killGraceMs;
    const settings = Object.fromEntries(setup.params.map((p) => [p.name, { type: p.type, value: p.value }]));
    const helper = setup.lmOnlyDictDir ? { lmOnlyDictDir: setup.lmOnlyDictDir } : {};
    const args = [SPHINX_DECODER_SCRIPT, JSON.stringify(settings), JSON.stringify(helper)];
    this.#child = spawn(setup.python, args, {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = waitForExit(this.#child);
    // EPIPE when the helper died: its exit status reports why.
    this.#child.stdin?.on("error", () => {});
    this.#child.stdout?.setEncoding("utf8").on("data", (d: string) => this.#onStdout(d));
    this.#child.stderr?.on("data", (d: Buffer) => this.#stderr.push(d));
  }

  get alive(): boolean {
    const c = this.#child;
    return c.pid !== undefined && c.exitCode === null && c.signalCode === null && !c.stdin?.destroyed;
  }

  /** Whether the models finished loading (a failure before that is a start-up failure). */
  get ready(): boolean {
    return this.#ready;
  }

  get stderr(): string {
    return this.#stderr.toString();
  }

  /**
   * Starts a stream; its results go to `listener` until its "done". With `partialIntervalMs`, the running
   * hypothesis inside an utterance every this much audio (when it changed), besides the ended utterances.
   */
  begin(listener: StreamListener, partialIntervalMs = 0): void {
    this.#listener = listener;
    // 16 kHz PCM16: 32 bytes a millisecond.
    this.#send(
      START,
      partialIntervalMs > 0
        ? Buffer.from(JSON.stringify({ partialBytes: partialIntervalMs * 32 }))
        : undefined,
    );
  }

  write(pcm: Buffer): void {
    this.#send(AUDIO, pcm);
  }

  end(): void {
    this.#send(END);
  }

  /** A decoder kept idle must not keep the server process alive; a busy one must. */
  setRef(ref: boolean): void {
    const c = this.#child;
    const handles = [c.stdin, c.stdout, c.stderr] as unknown as ({ ref?(): void; unref?(): void } | null)[];
    if (ref) c.ref();
    else c.unref();
    for (const h of handles) (ref ? h?.ref : h?.unref)?.call(h);
  }

  /** Ends the process: end of input first (it exits on its own when idle), then SIGTERM/SIGKILL. */
  kill(gentle = false): void {
    this.#listener = undefined;
    // Whoever awaits the exit must be able to: an idle (unreferenced) decoder would let the loop run dry.
    this.setRef(true);
    if (gentle) {
      this.#child.stdin?.end();
      const timer = setTimeout(() => terminate(this.#child, this.#killGraceMs), this.#killGraceMs);
      timer.unref();
      void this.exited.then(() => clearTimeout(timer));
    } else {
      this.#child.stdin?.destroy();
      terminate(this.#child, this.#killGraceMs);
    }
  }

  #send(kind: number, payload?: Buffer): void {
    const stdin = this.#child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded) return;
    const header = Buffer.allocUnsafe(5);
    header.writeUInt8(kind, 0);
    header.writeUInt32LE(payload?.byteLength ?? 0, 1);
    stdin.write(payload ? Buffer.concat([header, payload]) : header);
  }

  #onStdout(data: string): void {
    const lines = (this.#stdoutRest + data).split("\n");
    this.#stdoutRest = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      let message: { ready?: boolean; partial?: string; utterance?: string; done?: boolean };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        continue; // not ours (a library printing to stdout)
      }
      if (message.ready) this.#ready = true;
      const listener = this.#listener;
      if (typeof message.partial === "string") listener?.onRunning?.(message.partial);
      if (typeof message.utterance === "string") listener?.onUtterance(message.utterance);
      if (message.done) {
        this.#listener = undefined;
        listener?.onDone();
      }
    }
  }
}

export interface DecoderPoolOptions extends ResidentDecoderSetup {
  /** Idle decoders kept loaded for the next stream. */
  maxIdle: number;
  /** An idle decoder exits after this long unused, ms. */
  idleTimeoutMs: number;
}

/**
 * Resident decoders shared by a provider's streams: a stream takes an idle
 * one (or a new one) for its whole life and gives it back when its result is
 * in. Busy decoders are never shared, so streams never wait for each other.
 */
export class DecoderPool {
  readonly #options: DecoderPoolOptions;
  readonly #idle: { decoder: ResidentDecoder; timer: NodeJS.Timeout }[] = [];
  readonly #all = new Set<ResidentDecoder>();
  #closing: Promise<void> | undefined;

  constructor(options: DecoderPoolOptions) {
    this.#options = options;
  }

  /** Live decoder processes, idle or busy (tests, metrics). */
  get size(): number {
    return this.#all.size;
  }

  acquire(): ResidentDecoder {
    while (this.#idle.length > 0) {
      const { decoder, timer } = this.#idle.pop()!;
      clearTimeout(timer);
      if (decoder.alive) {
        decoder.setRef(true);
        return decoder;
      }
    }
    const decoder = new ResidentDecoder(this.#options);
    this.#all.add(decoder);
    void decoder.exited.then(() => {
      this.#all.delete(decoder);
      const i = this.#idle.findIndex((e) => e.decoder === decoder);
      if (i >= 0) clearTimeout(this.#idle.splice(i, 1)[0]!.timer);
    });
    return decoder;
  }

  /** Takes a decoder back after its stream's "done" (a stream that failed or was aborted kills its own). */
  release(decoder: ResidentDecoder): void {
    if (this.#closing || !decoder.alive || this.#idle.length >= this.#options.maxIdle) {
      decoder.kill(true);
      return;
    }
    const timer = setTimeout(() => {
      const i = this.#idle.findIndex((e) => e.decoder === decoder);
      if (i >= 0) this.#idle.splice(i, 1);
      decoder.kill(true);
    }, this.#options.idleTimeoutMs);
    timer.unref();
    decoder.setRef(false);
    this.#idle.push({ decoder, timer });
  }

  /** Ends every decoder, idle or busy, and resolves when they are gone. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const { timer } of this.#idle.splice(0)) clearTimeout(timer);
      const all = [...this.#all];
      for (const d of all) d.kill();
      await Promise.all(all.map((d) => d.exited));
    })();
    return this.#closing;
  }
}

type StreamState = "open" | "finishing" | "ended";

/** Python's message when the binding is missing. */
const NO_BINDING = /No module named '?pocketsphinx|No module named '?sphinxbase/;

/** One stream on a resident decoder from the pool (same contract as the per-stream decoder). */
export class ResidentStream implements SttStream {
  readonly #pool: DecoderPool;
  readonly #signal: AbortSignal;
  readonly #onPartial: ((text: string) => void) | undefined;
  readonly #decoder: ResidentDecoder | undefined;
  readonly #utterances: string[] = [];
  /** The running hypothesis of the utterance in progress (reported after the ended ones). */
  #running = "";
  readonly #done: Promise<ChildExit | undefined>;
  #state: StreamState = "open";
  #finish: Promise<SttResult> | undefined;
  readonly #onAbort = (): void => this.#abort();

  constructor(
    pool: DecoderPool,
    signal: AbortSignal,
    onPartial: ((text: string) => void) | undefined,
    partialIntervalMs = 0,
  ) {
    this.#pool = pool;
    this.#signal = signal;
    this.#onPartial = onPartial;
    if (signal.aborted) {
      this.#state = "ended";
      this.#done = Promise.resolve(undefined);
      return;
    }
    const decoder = pool.acquire();
    this.#decoder = decoder;
    // Resolves undefined on the stream's "done", or with the exit when the decoder died first.
    this.#done = new Promise<ChildExit | undefined>((resolve) => {
      decoder.begin(
        {
          onRunning: (text) => this.#onRunning(text),
          onUtterance: (text) => this.#onUtterance(text),
          onDone: () => resolve(undefined),
        },
        partialIntervalMs,
      );
      void decoder.exited.then(resolve);
    });
    signal.addEventListener("abort", this.#onAbort, { once: true });
    void this.#done.then(() => signal.removeEventListener("abort", this.#onAbort));
  }

  write(pcm: Int16Array): void {
    if (this.#state !== "open")
      throw new TalkError("invalid_state", "The STT stream is finished or aborted.");
    if (pcm.length === 0) return;
    // Copied: the caller may reuse its buffer while the write is queued. Little-endian host order.
    this.#decoder?.write(Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
  }

  finish(): Promise<SttResult> {
    this.#finish ??= this.#finishOnce();
    return this.#finish;
  }

  async #finishOnce(): Promise<SttResult> {
    if (this.#state === "open") {
      this.#state = "finishing";
      this.#decoder?.end();
    }
    const exit = await this.#done;
    const decoder = this.#decoder;
    if (this.#signal.aborted || !decoder) {
      if (decoder) await decoder.exited;
      throw new TalkError("cancelled", "Speech recognition was cancelled.", { cause: this.#signal.reason });
    }
    this.#state = "ended";
    if (exit === undefined) {
      this.#pool.release(decoder);
      return { text: this.#utterances.join(" ") };
    }
    throw failure(exit, decoder);
  }

  /** Aborting kills the decoder (it may hold seconds of queued audio); the pool starts a fresh one later. */
  #abort(): void {
    this.#state = "ended";
    this.#decoder?.kill();
  }

  #onRunning(text: string): void {
    this.#running = text;
    this.#report();
  }

  #onUtterance(text: string): void {
    this.#utterances.push(text);
    this.#running = "";
    this.#report();
  }

  /** The running text: the utterances ended so far, then the one in progress. */
  #report(): void {
    if (!this.#onPartial || this.#signal.aborted) return;
    try {
      this.#onPartial([...this.#utterances, ...(this.#running ? [this.#running] : [])].join(" "));
    } catch {
      // A listener that throws must not break recognition.
    }
  }
}

function failure(exit: ChildExit, decoder: ResidentDecoder): TalkError {
  if (exit.error) {
    const code = exit.error.code === "ENOENT" ? "provider_unavailable" : "provider_error";
    return new TalkError(code, `pocketsphinx decoder could not be started: ${exit.error.message}`, {
      cause: exit.error,
    });
  }
  const stderr = decoder.stderr;
  if (!decoder.ready && NO_BINDING.test(stderr)) {
    return new TalkError(
      "provider_unavailable",
      "The pocketsphinx Python binding is missing; install the Debian package python3-pocketsphinx.",
    );
  }
  return new TalkError(
    "provider_error",
    `pocketsphinx decoder exited with ${exit.code ?? exit.signal}: ${lastProblem(stderr)}`,
    { details: { exitCode: exit.code, signal: exit.signal } },
  );
}

/** The decoder logs INFO lines to stderr; the useful part of a failure is the last ERROR/FATAL line. */
export function lastProblem(stderr: string): string {
  const lines = stderr.split("\n").filter((l) => /ERROR|FATAL|Error/.test(l));
  return lines.at(-1)?.trim() ?? (stderr.split("\n").at(-1)?.trim() || "no output");
}
