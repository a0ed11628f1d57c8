/**
 * The N-API binding to Debian's libspeexdsp (native/speexdsp, built by
 * scripts/setup.sh), loaded once per process and shared by the echo canceller
 * and the noise suppressor.
 */
import { createRequire } from "node:module";
import { CodecError } from "./codec-error.js";

export interface NativeCanceller {
  process(mic: Int16Array, reference: Int16Array, out: Int16Array): void;
  close(): void;
}

export interface NativeSuppressor {
  /** Denoises one frame in place. */
  process(pcm: Int16Array): void;
  close(): void;
}

export interface SpeexdspBinding {
  EchoCanceller: new (
    frameSize: number,
    filterLength: number,
    sampleRate: number,
    denoise: boolean,
  ) => NativeCanceller;
  NoiseSuppressor: new (frameSize: number, sampleRate: number, suppressDb: number) => NativeSuppressor;
}

let binding: SpeexdspBinding | undefined;
let loadError: unknown;

/** The binding; codec_unavailable, every time, when it is not built. */
export function speexdspBinding(): SpeexdspBinding {
  if (binding) return binding;
  if (loadError === undefined) {
    try {
      binding = createRequire(import.meta.url)(
        "../../native/speexdsp/build/Release/speexdsp.node",
      ) as SpeexdspBinding;
      return binding;
    } catch (err) {
      loadError = err;
    }
  }
  throw new CodecError(
    "codec_unavailable",
    `the libspeexdsp native binding is not built (run scripts/setup.sh; it needs Debian's libspeexdsp-dev): ${
      loadError instanceof Error ? loadError.message : String(loadError)
    }`,
    { cause: loadError },
  );
}

/** Whether the libspeexdsp binding loads here. */
export function speexdspAvailable(): boolean {
  try {
    speexdspBinding();
    return true;
  } catch {
    return false;
  }
}
