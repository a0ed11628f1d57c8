/**
 * A 16-bit PCM WAV file written as it grows: the header first (no samples),
 * then each append writes its samples after the ones before and rewrites the
 * header with the new sizes. Samples go before the header that counts them,
 * so whenever the file is cut (a crash, a full disk) it is a valid WAV file
 * up to its last complete append.
 */
import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { bytesFromPcm16, WAV_HEADER_BYTES, wavHeader } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";

export interface WavFormat {
  sampleRate: number;
  channels: number;
}

export class WavFileWriter {
  readonly path: string;
  readonly format: WavFormat;
  readonly #file: FileHandle;
  #dataBytes = 0;
  #closing: Promise<void> | undefined;

  private constructor(path: string, format: WavFormat, file: FileHandle) {
    this.path = path;
    this.format = format;
    this.#file = file;
  }

  /** Creates (or truncates) `path`, and its directory when missing, and writes an empty file's header. */
  static async create(path: string, format: WavFormat): Promise<WavFileWriter> {
    const header = wavHeader(format, 0);
    await mkdir(dirname(path), { recursive: true });
    const file = await open(path, "w");
    try {
      await writeAll(file, header, 0);
    } catch (err) {
      await file.close().catch(() => {});
      throw err;
    }
    return new WavFileWriter(path, format, file);
  }

  /** Bytes of samples written and counted by the header. */
  get dataBytes(): number {
    return this.#dataBytes;
  }

  /** Appends interleaved samples (whole frames of `format.channels`), then updates the header. */
  async append(samples: Int16Array): Promise<void> {
    if (this.#closing) throw new TalkError("invalid_state", "The recording file is closed.");
    if (samples.length % this.format.channels !== 0)
      throw new TalkError("invalid_audio", "Samples must be whole frames of the file's channels.");
    if (samples.length === 0) return;
    const bytes = bytesFromPcm16(samples);
    await writeAll(this.#file, bytes, WAV_HEADER_BYTES + this.#dataBytes);
    const total = this.#dataBytes + bytes.byteLength;
    await writeAll(this.#file, wavHeader(this.format, total), 0);
    this.#dataBytes = total;
  }

  /** Closes the file. Idempotent (returns the close in progress). */
  close(): Promise<void> {
    this.#closing ??= this.#file.close();
    return this.#closing;
  }
}

/** Writes all of `bytes` at `position` (a positional write may write less than asked). */
async function writeAll(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) {
    const { bytesWritten } = await file.write(bytes, done, bytes.byteLength - done, position + done);
    if (bytesWritten <= 0) throw new TalkError("internal", "A write to the recording file wrote nothing.");
    done += bytesWritten;
  }
}
