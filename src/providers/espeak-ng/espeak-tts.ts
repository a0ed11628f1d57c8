import { spawn } from "node:child_process";
import { audioFromBytes, pcmChunk, TalkError } from "../../core/index.js";
import type {
  AudioChunk,
  ProviderCapabilities,
  ProviderHealth,
  TtsProvider,
  TtsRequest,
} from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { TailBuffer, terminate, waitForExit } from "../support/child-process.js";
import { findExecutable } from "../support/find-executable.js";
import { mergeOptions } from "../support/options.js";
import { type CachedSynthesis, SynthesisCache } from "./synthesis-cache.js";
import { WavStreamParser } from "./wav-stream-parser.js";

/** What espeak-ng writes with --stdout: 16-bit mono WAV at 22 050 Hz. */
export const ESPEAK_OUTPUT_FORMAT: AudioFormat = Object.freeze({
  encoding: "pcm16",
  sampleRate: 22_050,
  channels: 1,
});

/** Options of the espeak-ng text-to-speech provider. */
export interface EspeakTtsOptions {
  /** Provider id in the registry and catalog. Default "espeak-ng". */
  id?: string;
  /** Executable name (looked up on PATH) or absolute path. Default "espeak-ng". */
  binary?: string;
  /** Voice used when a request names none. Default "en-us". */
  defaultVoice?: string;
  /** Words per minute at speed 1.0. Default 175 (espeak-ng's own default). */
  wordsPerMinute?: number;
  /** Time between SIGTERM and SIGKILL when synthesis is aborted, ms. Default 200. */
  killGraceMs?: number;
  /** Longest text accepted, in characters. Default 10 000. */
  maxTextLength?: number;
  /**
   * Replay a short text's finished synthesis from memory rather than start espeak-ng again (the
   * process-wide SynthesisCache: texts up to 200 characters, 4 MiB in all). Default true.
   */
  cache?: boolean;
}

const DEFAULTS: Readonly<Required<EspeakTtsOptions>> = Object.freeze({
  id: "espeak-ng",
  binary: "espeak-ng",
  defaultVoice: "en-us",
  wordsPerMinute: 175,
  killGraceMs: 200,
  maxTextLength: 10_000,
  cache: true,
});

/** Shared by every espeak-ng provider of the process: each app renders the same lines at start. */
const syntheses = new SynthesisCache();
/** `espeak-ng --voices` per binary, read once per process (a failed read is tried again). */
const voiceLists = new Map<string, Promise<string[]>>();

/** espeak-ng's accepted -s range. */
const MIN_WPM = 80;
const MAX_WPM = 450;
/** Voice names are language tags like "en-us" or "cmn-latn-pinyin"; anything else never reaches argv. */
const VOICE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

export class EspeakTtsProvider implements TtsProvider {
  readonly kind = "tts" as const;
  readonly id: string;
  readonly label = "eSpeak NG (local)";
  readonly #options: Readonly<Required<EspeakTtsOptions>>;
  readonly #capabilities: ProviderCapabilities;
  #binaryPath: Promise<string | undefined> | undefined;
  #voices: Promise<string[]> | undefined;

  constructor(options: EspeakTtsOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    validateOptions(merged);
    this.#options = Object.freeze(merged);
    this.id = merged.id;
    this.#capabilities = {
      local: true,
      streaming: true,
      // Filled from `espeak-ng --voices` on first health() / listVoices().
      voices: [merged.defaultVoice],
      outputFormats: [ESPEAK_OUTPUT_FORMAT],
    };
  }

  get capabilities(): ProviderCapabilities {
    return this.#capabilities;
  }

  async health(): Promise<ProviderHealth> {
    const binary = await this.#resolveBinary();
    if (!binary) {
      return {
        ok: false,
        detail: `espeak-ng executable "${this.#options.binary}" not found on PATH; install the Debian package espeak-ng or configure its path`,
      };
    }
    try {
      const voices = await this.listVoices();
      return { ok: true, detail: `${binary}, ${voices.length} voices` };
    } catch (err) {
      return { ok: false, detail: `espeak-ng --voices failed: ${(err as Error).message}` };
    }
  }

  /** Voice ids (espeak-ng language names), read once per binary and process from `espeak-ng --voices`. */
  listVoices(): Promise<string[]> {
    this.#voices ??= this.#loadVoices().catch((err: unknown) => {
      // A failed lookup is retried next time rather than cached.
      this.#voices = undefined;
      throw err;
    });
    return this.#voices;
  }

  async *synthesize(request: TtsRequest): AsyncGenerator<AudioChunk> {
    const { signal } = request;
    const text = validateText(request.text, this.#options.maxTextLength);
    if (signal.aborted) throw cancelled(signal);
    const binary = await this.#resolveBinary();
    if (!binary)
      throw new TalkError(
        "provider_unavailable",
        `espeak-ng executable "${this.#options.binary}" not found.`,
      );
    const voice = await this.#resolveVoice(request.voice);
    if (signal.aborted) throw cancelled(signal);

    const wordsPerMinute = this.#wordsPerMinute(request.speed);
    const key = this.#options.cache ? SynthesisCache.key(binary, voice, wordsPerMinute, text) : undefined;
    const cached = key === undefined ? undefined : syntheses.get(key);
    if (cached) {
      yield* replay(cached, signal);
      return;
    }
    // What a cache entry would hold: copies, as a consumer may write into the chunks it is given.
    const kept: Int16Array[] | undefined = key === undefined ? undefined : [];

    const args = ["--stdout", "-b", "1", "-v", voice, "-s", String(wordsPerMinute), "--stdin"];
    // No shell: argv is passed as is and the text only ever travels on stdin.
    const child = spawn(binary, args, { stdio: ["pipe", "pipe", "pipe"] });
    const exited = waitForExit(child);
    const stderr = new TailBuffer();
    child.stderr.on("data", (d: Buffer) => stderr.push(d));
    // EPIPE when the child dies before reading its input; the exit status reports the failure.
    child.stdin.on("error", () => {});
    child.stdin.end(text);

    const onAbort = (): void => terminate(child, this.#options.killGraceMs);
    signal.addEventListener("abort", onAbort, { once: true });
    const parser = new WavStreamParser();
    try {
      try {
        for await (const bytes of child.stdout as AsyncIterable<Buffer>) {
          if (signal.aborted) break;
          const pcm = parser.push(bytes);
          if (pcm.byteLength > 0 && parser.format) {
            const chunk = audioFromBytes(pcm, parser.format);
            if (kept && chunk.kind === "pcm") kept.push(chunk.samples.slice());
            yield chunk;
          }
          if (signal.aborted) break;
        }
      } catch (err) {
        if (!signal.aborted)
          throw new TalkError("provider_error", "Reading espeak-ng output failed.", { cause: err });
      }
      if (signal.aborted) {
        // The iterator ends only once the process is gone, so "cancelled" means "stopped".
        await exited;
        throw cancelled(signal);
      }
      const exit = await exited;
      if (exit.error) {
        const code = exit.error.code === "ENOENT" ? "provider_unavailable" : "provider_error";
        throw new TalkError(code, `espeak-ng could not be started: ${exit.error.message}`, {
          cause: exit.error,
        });
      }
      if (exit.code !== 0) {
        throw new TalkError(
          "provider_error",
          `espeak-ng exited with ${exit.code ?? exit.signal}: ${stderr.toString() || "no output"}`,
          {
            details: { exitCode: exit.code, signal: exit.signal },
          },
        );
      }
      parser.end();
      if (key !== undefined && kept && parser.format)
        syntheses.set(key, { format: parser.format, chunks: kept });
    } finally {
      signal.removeEventListener("abort", onAbort);
      // The consumer may stop early (break / return) or fail: never leave the process behind.
      terminate(child, this.#options.killGraceMs);
      await exited;
    }
  }

  async close(): Promise<void> {
    // Nothing long-lived: every synthesis owns its process and ends it.
  }

  #wordsPerMinute(speed: number | undefined): number {
    if (speed === undefined) return clamp(Math.round(this.#options.wordsPerMinute), MIN_WPM, MAX_WPM);
    if (!Number.isFinite(speed) || speed <= 0) {
      throw new TalkError("invalid_params", "speed must be a positive number (1.0 = normal).");
    }
    return clamp(Math.round(this.#options.wordsPerMinute * speed), MIN_WPM, MAX_WPM);
  }

  async #resolveVoice(requested: string | undefined): Promise<string> {
    const voice = requested ?? this.#options.defaultVoice;
    if (!VOICE_PATTERN.test(voice))
      throw new TalkError("invalid_params", `Unknown espeak-ng voice "${voice}".`);
    let voices: string[];
    try {
      voices = await this.listVoices();
    } catch (err) {
      throw new TalkError("provider_unavailable", "espeak-ng voices could not be listed.", { cause: err });
    }
    if (!voices.includes(voice)) throw new TalkError("invalid_params", `Unknown espeak-ng voice "${voice}".`);
    return voice;
  }

  #resolveBinary(): Promise<string | undefined> {
    this.#binaryPath ??= findExecutable(this.#options.binary).then((path) => {
      // Not cached when missing: the package may be installed while we run.
      if (!path) this.#binaryPath = undefined;
      return path;
    });
    return this.#binaryPath;
  }

  async #loadVoices(): Promise<string[]> {
    const binary = await this.#resolveBinary();
    if (!binary)
      throw new TalkError(
        "provider_unavailable",
        `espeak-ng executable "${this.#options.binary}" not found.`,
      );
    let listed = voiceLists.get(binary);
    if (!listed) {
      listed = readVoices(binary);
      voiceLists.set(binary, listed);
      listed.catch(() => voiceLists.delete(binary));
    }
    const voices = await listed;
    this.#capabilities.voices = voices;
    return voices;
  }
}

async function readVoices(binary: string): Promise<string[]> {
  const child = spawn(binary, ["--voices"], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = waitForExit(child);
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const exit = await exited;
  if (exit.error || exit.code !== 0) {
    throw new TalkError(
      "provider_error",
      `espeak-ng --voices exited with ${exit.error?.message ?? exit.code}`,
    );
  }
  return parseVoiceList(out);
}

/** A cached synthesis as fresh chunks, stopping at an abort as a running espeak-ng would. */
function* replay(cached: CachedSynthesis, signal: AbortSignal): Generator<AudioChunk> {
  for (const samples of cached.chunks) {
    if (signal.aborted) throw cancelled(signal);
    yield pcmChunk(samples.slice(), cached.format);
  }
  if (signal.aborted) throw cancelled(signal);
}

/** Parses `espeak-ng --voices`: a header line, then "Pty Language Age/Gender VoiceName File ...". */
export function parseVoiceList(output: string): string[] {
  const voices = new Set<string>();
  for (const line of output.split("\n").slice(1)) {
    const language = line.trim().split(/\s+/)[1];
    if (language && VOICE_PATTERN.test(language)) voices.add(language);
  }
  return [...voices];
}

export function createEspeakTts(options: EspeakTtsOptions = {}): EspeakTtsProvider {
  return new EspeakTtsProvider(options);
}

function validateOptions(o: Required<EspeakTtsOptions>): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `espeak-ng: ${field} ${why}`);
  };
  if (!o.id) bad("id", "must be a non-empty string");
  if (!o.binary) bad("binary", "must be a non-empty string");
  if (!VOICE_PATTERN.test(o.defaultVoice)) bad("defaultVoice", "must be a voice name like en-us");
  if (!Number.isFinite(o.wordsPerMinute) || o.wordsPerMinute < MIN_WPM || o.wordsPerMinute > MAX_WPM) {
    bad("wordsPerMinute", `must be between ${MIN_WPM} and ${MAX_WPM}`);
  }
  if (!Number.isInteger(o.killGraceMs) || o.killGraceMs < 0)
    bad("killGraceMs", "must be a non-negative integer");
  if (!Number.isInteger(o.maxTextLength) || o.maxTextLength < 1)
    bad("maxTextLength", "must be a positive integer");
  if (typeof o.cache !== "boolean") bad("cache", "must be true or false");
}

function validateText(text: unknown, max: number): string {
  if (typeof text !== "string" || text.trim() === "")
    throw new TalkError("invalid_params", "text must be a non-empty string.");
  if (text.length > max) throw new TalkError("payload_too_large", `text exceeds ${max} characters.`);
  return text;
}

function cancelled(signal: AbortSignal): TalkError {
  return new TalkError("cancelled", "Speech synthesis was cancelled.", { cause: signal.reason });
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
