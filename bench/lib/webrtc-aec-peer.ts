/**
 * The echo figures' peer (bench/onset-latency.bench.ts --peer webrtc-aec): WebRTC's echo canceller from
 * Debian's webrtc-audio-processing 0.3, as PulseAudio's module-echo-cancel runs it (its extended filter and
 * delay-agnostic mode, so it finds and follows the echo's delay itself), with nothing after it but the same
 * speech gate. native/webrtc-aec, built by scripts/setup.sh; benches only, the server never loads it.
 *
 * What it stands for: a media stack that cancels echo with a well-kept canceller and lets its voice activity
 * detector barge in on what comes out. Its own non-linear processing is its residual echo suppression, so
 * the gate hears the caller through the same suppression; `suppression` is its strength (0-2).
 */
import { createRequire } from "node:module";
import type { ChainGuard, ChainModules } from "./onset-latency.js";

interface NativeCanceller {
  process(mic: Int16Array, reference: Int16Array, out: Int16Array): void;
  close(): void;
}

interface Binding {
  EchoCanceller: new (sampleRate: number, suppression: number) => NativeCanceller;
}

/** The suppression levels by name, as --peer takes them (webrtc-aec:low). */
export const WEBRTC_SUPPRESSION = { low: 0, moderate: 1, high: 2 } as const;
export type WebrtcSuppression = keyof typeof WEBRTC_SUPPRESSION;

let binding: Binding | undefined;

/** The binding; throws naming setup.sh and the Debian package when it is not built. */
export function webrtcAecBinding(): Binding {
  if (binding) return binding;
  try {
    binding = createRequire(import.meta.url)(
      "../../native/webrtc-aec/build/Release/webrtc_aec.node",
    ) as Binding;
    return binding;
  } catch (err) {
    throw new Error(
      `the WebRTC echo canceller peer is not built (run scripts/setup.sh; it needs Debian's libwebrtc-audio-processing-dev): ${
        err instanceof Error ? err.message : String(err)
      }`,
      { cause: err },
    );
  }
}

/** The peer's canceller in the place of the leg's echo guard: the caller channel in, its output out, nothing held. */
class WebrtcAecGuard implements ChainGuard {
  readonly suppressedFrames = 0;
  readonly doubleTalkFrames = 0;
  readonly #native: NativeCanceller;

  constructor(sampleRate: number, suppression: number) {
    this.#native = new (webrtcAecBinding().EchoCanceller)(sampleRate, suppression);
  }

  process(mic: Int16Array, reference: Int16Array | undefined): Int16Array {
    // Nothing played: silence. A reference of another span than the caller's is the bench's bug, not silence.
    if (reference && reference.length !== mic.length)
      throw new Error(
        `webrtc-aec peer: ${reference.length} reference samples for ${mic.length} caller samples`,
      );
    const played = reference ?? new Int16Array(mic.length);
    const out = new Int16Array(mic.length);
    this.#native.process(mic, played, out);
    return out;
  }

  callerSpeaking(): void {}

  close(): void {
    this.#native.close();
  }
}

/** A chain whose guard is the peer's canceller, the rest (the gate) `base`'s. */
export function webrtcAecChain(base: ChainModules, suppression: WebrtcSuppression): ChainModules {
  const level = WEBRTC_SUPPRESSION[suppression];
  return {
    ...base,
    name: `webrtc-aec:${suppression}`,
    wordsProbe: undefined,
    EchoGuard: class extends WebrtcAecGuard {
      constructor(_create: unknown, _options: unknown, sampleRate: number) {
        super(sampleRate, level);
      }
    },
  };
}
