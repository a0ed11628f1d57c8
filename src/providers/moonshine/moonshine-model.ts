/**
 * The Moonshine speech recognizer's model (the English "tiny" model, MIT, the
 * one `@usefulsensors/moonshine-js` ships: nothing is downloaded at run time)
 * on a thread of its own (moonshine-worker.mjs), shared by every stream of a
 * provider. Decodes run one at a time in the order asked; a caller that no
 * longer needs an answer simply ignores it.
 *
 * The thread starts with the first stream (warm()) or decode and is ended by close(), which asks
 * it to stop and waits for it: Worker.terminate() while onnxruntime-node runs
 * a session aborts the whole process ("terminate called after throwing an
 * instance of 'Napi::Error'": the binding's calls fail once V8 stops the
 * thread, and nothing catches the C++ exception). If it dies,
 * what was waiting fails with `provider_error` and the next decode starts a
 * new one. A model that cannot be loaded (onnxruntime-node or a model file
 * refused) is not tried again: every decode fails at once with the load's
 * `provider_unavailable`, so a fallback recognizer answers without waiting.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { TalkError } from "../../core/index.js";

export const MOONSHINE_MODEL_PACKAGE = "@usefulsensors/moonshine-js";
const TINY_MODEL_DIR = join("dist", "model", "tiny", "quantized");

/**
 * The directory holding the tiny model's encoder_model.onnx and decoder_model_merged.onnx, or undefined
 * when the package is not installed. Its exports map names only its bundle, so the directory is found on
 * the resolver's search paths.
 */
export function defaultMoonshineModelDir(): string | undefined {
  const require = createRequire(import.meta.url);
  for (const base of require.resolve.paths(MOONSHINE_MODEL_PACKAGE) ?? []) {
    const dir = join(base, MOONSHINE_MODEL_PACKAGE, TINY_MODEL_DIR);
    if (existsSync(join(dir, "encoder_model.onnx"))) return dir;
  }
  return undefined;
}

export interface MoonshineDecode {
  text: string;
  /** Time the thread spent on it, ms. */
  ms: number;
}

interface Pending {
  resolve(result: MoonshineDecode): void;
  reject(err: unknown): void;
}

type WorkerReply =
  | { ready: true }
  | { loadError: string }
  | { id: number; text: string; ms: number }
  | { id: number; error: string };

export class MoonshineModel {
  readonly modelDir: string;
  readonly #threads: number;
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #closed = false;
  #loadError: TalkError | undefined;
  #decodes = 0;
  #decodeMs = 0;

  constructor(modelDir: string, threads = 1) {
    this.modelDir = modelDir;
    this.#threads = threads;
  }

  /** Decodes done so far and the thread's time on them, ms. */
  get stats(): { decodes: number; decodeMs: number; waiting: number } {
    return { decodes: this.#decodes, decodeMs: this.#decodeMs, waiting: this.#pending.size };
  }

  /** Transcribes 16 kHz mono audio in -1..1 (transferred: the caller must not reuse it). */
  transcribe(audio: Float32Array): Promise<MoonshineDecode> {
    if (this.#closed) return Promise.reject(new TalkError("invalid_state", "The Moonshine model is closed."));
    if (this.#loadError) return Promise.reject(this.#loadError);
    const worker = this.#start();
    const id = this.#nextId++;
    return new Promise<MoonshineDecode>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Waiting on a decode keeps the process alive; an idle thread does not.
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ id, audio }, [audio.buffer as ArrayBuffer]);
    });
  }

  /**
   * Starts the thread (it loads the model at once) without a decode: a stream calls this as it opens, so
   * the load, about a second, runs while the first speaker talks, not after their first pause.
   */
  warm(): void {
    if (!this.#closed && !this.#loadError) this.#start();
  }

  /** Ends the thread; what was waiting fails with `cancelled`. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new TalkError("cancelled", "The Moonshine model was closed."));
    if (worker) await stopWorker(worker);
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL("./moonshine-worker.mjs", import.meta.url), {
      workerData: {
        encoderPath: join(this.modelDir, "encoder_model.onnx"),
        decoderPath: join(this.modelDir, "decoder_model_merged.onnx"),
        threads: this.#threads,
      },
    });
    // A thread with nothing waiting must not keep the process alive (transcribe() refs it while it works).
    worker.unref();
    worker.on("message", (reply: WorkerReply) => this.#onReply(reply));
    worker.on("error", (err) => this.#onDeath(worker, err));
    worker.on("exit", (code) => this.#onDeath(worker, new Error(`the Moonshine thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #onReply(reply: WorkerReply): void {
    if ("ready" in reply) return;
    if ("loadError" in reply) {
      const err = new TalkError(
        "provider_unavailable",
        `The Moonshine model could not be loaded: ${reply.loadError}`,
      );
      this.#loadError = err;
      this.#failAll(err);
      const worker = this.#worker;
      this.#worker = undefined;
      if (worker) void stopWorker(worker);
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if ("error" in reply) {
      pending.reject(new TalkError("provider_error", `Moonshine failed to decode: ${reply.error}`));
      return;
    }
    this.#decodes++;
    this.#decodeMs += reply.ms;
    pending.resolve({ text: reply.text, ms: reply.ms });
  }

  #onDeath(worker: Worker, err: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#failAll(
      new TalkError("provider_error", `The Moonshine thread failed: ${err.message}`, { cause: err }),
    );
  }

  #failAll(err: TalkError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(err);
  }
}

/** Longest wait for the thread to finish the decode it runs and exit, ms; past it the thread is left to end alone. */
const STOP_WAIT_MS = 10_000;

/**
 * Asks the thread to stop after the decode it runs (queued ones are skipped) and resolves when it has
 * exited. Never Worker.terminate(): cut inside onnxruntime-node it aborts the process. A thread that
 * does not exit in STOP_WAIT_MS is not waited for any more (and unref'd: it holds no process open).
 */
function stopWorker(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    if (worker.threadId === -1) return resolve(); // already gone
    // Both held (ref'd) while waiting, so that an awaited close() is not cut short by an empty event loop.
    const timer = setTimeout(() => {
      worker.unref();
      resolve();
    }, STOP_WAIT_MS);
    worker.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    worker.ref();
    worker.postMessage({ close: true });
  });
}
