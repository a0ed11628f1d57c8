/**
 * A second peer for the echo figures (bench/onset-latency.bench.ts --peer webrtc-aec3, webrtc-aec3+guard):
 * WebRTC's current echo canceller, AEC3 (the one Chromium runs), from the npm package
 * @ennuicastr/webrtcaec3.js (WebRTC's AEC3 compiled to WebAssembly; a devDependency, benches only).
 * Debian 12 ships only webrtc-audio-processing 0.3 (the older AEC, webrtc-aec-peer.ts). AEC3 estimates
 * the echo's delay itself and follows a changing one (its render delay controller), and suppresses what
 * its filter leaves by its own echo and double-talk estimates.
 *
 * Two chains:
 * - `webrtc-aec3`: AEC3, then the same speech gate (what a stack with a well-kept canceller and nothing
 *   else would hear);
 * - `webrtc-aec3+guard`: talkgate's echo guard over AEC3 in the place of libspeexdsp's filter (the
 *   guard's bar, coherence test and residual detector on AEC3's output).
 *
 * AEC3 runs at 16 kHz here (the lowest rate it takes); the package resamples the line's 8 kHz in and out.
 */
import { createRequire } from "node:module";
import { EchoCoherence } from "../../src/codecs/echo-coherence.js";
import type { EchoCancellerPort } from "../../src/voice/media/echo-guard.js";
import type { ChainGuard, ChainModules } from "./onset-latency.js";

interface Aec3Instance {
  analyze(data: Float32Array[], opts?: { sampleRateIn?: number }): void;
  processSize(data: Float32Array[], opts?: { sampleRateIn?: number; sampleRateOut?: number }): number;
  process(
    out: Float32Array[],
    data: Float32Array[],
    opts?: { sampleRateIn?: number; sampleRateOut?: number },
  ): void;
  free(): void;
}

interface Aec3Module {
  AEC3: new (sampleRate: number, renderChannels: number, captureChannels: number) => Aec3Instance;
}

const AEC3_RATE = 16_000;
let loaded: Promise<Aec3Module> | undefined;

/** The WebAssembly module (one per process); throws naming the package when it is not installed. */
export function webrtcAec3Module(): Promise<Aec3Module> {
  loaded ??= (async () => {
    let factory: () => Promise<Aec3Module>;
    try {
      factory = createRequire(import.meta.url)("@ennuicastr/webrtcaec3.js") as () => Promise<Aec3Module>;
    } catch (err) {
      throw new Error(
        `the AEC3 peer needs the devDependency @ennuicastr/webrtcaec3.js (npm ci): ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    return factory();
  })();
  return loaded;
}

const toFloat = (pcm: Int16Array): Float32Array => Float32Array.from(pcm, (v) => v / 32768);

/**
 * AEC3 as an echo canceller port (the guard's): the reference as played, the caller channel in, the echo
 * removed out, frame for frame; with the coherence measure the guard's double-talk tests read.
 */
export class Aec3Canceller implements EchoCancellerPort {
  readonly outputLagMs = 0;
  readonly #aec: Aec3Instance;
  readonly #rate: number;
  readonly #frame: number;
  readonly #coherence: EchoCoherence | undefined;
  #reference: Int16Array = new Int16Array(0);
  #closed = false;

  constructor(module: Aec3Module, sampleRate: number, tailMs: number, doubleTalk: boolean) {
    this.#aec = new module.AEC3(AEC3_RATE, 1, 1);
    this.#rate = sampleRate;
    this.#frame = sampleRate / 50;
    this.#coherence = doubleTalk
      ? new EchoCoherence({ sampleRate, maxLagFrames: Math.ceil(tailMs / 20) + 5 })
      : undefined;
  }

  played(pcm: Int16Array): void {
    const joined = new Int16Array(this.#reference.length + pcm.length);
    joined.set(this.#reference);
    joined.set(pcm, this.#reference.length);
    this.#reference = joined;
  }

  process(mic: Int16Array): Int16Array {
    if (this.#closed) throw new Error("the AEC3 canceller is closed");
    if (mic.length % this.#frame !== 0)
      throw new Error(`AEC3 peer: ${mic.length} samples is not whole 20 ms frames`);
    const result = new Int16Array(mic.length);
    for (let at = 0; at < mic.length; at += this.#frame) {
      const ref = new Int16Array(this.#frame);
      ref.set(this.#reference.subarray(0, this.#frame));
      this.#reference = this.#reference.subarray(Math.min(this.#frame, this.#reference.length));
      const opts = { sampleRateIn: this.#rate, sampleRateOut: this.#rate };
      this.#aec.analyze([toFloat(ref)], opts);
      const data = [toFloat(mic.subarray(at, at + this.#frame))];
      const out = [new Float32Array(Math.max(this.#frame, this.#aec.processSize(data, opts)))];
      this.#aec.process(out, data, opts);
      const frame = Int16Array.from(out[0]!.subarray(0, this.#frame), (v) =>
        Math.max(-32768, Math.min(32767, Math.round(v * 32768))),
      );
      this.#coherence?.frame(ref, frame);
      result.set(frame, at);
    }
    return result;
  }

  explainedWithin(from: number, to: number): number {
    return this.#coherence?.explainedWithin(from, to) ?? 0;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#aec.free();
  }
}

/** AEC3 in the guard's place: the caller channel in, its output out, nothing held. */
class Aec3Guard implements ChainGuard {
  readonly suppressedFrames = 0;
  readonly doubleTalkFrames = 0;
  readonly #canceller: Aec3Canceller;

  constructor(module: Aec3Module, sampleRate: number) {
    this.#canceller = new Aec3Canceller(module, sampleRate, 300, false);
  }

  process(mic: Int16Array, reference: Int16Array | undefined): Int16Array {
    this.#canceller.played(reference ?? new Int16Array(mic.length));
    return this.#canceller.process(mic);
  }

  callerSpeaking(): void {}

  close(): void {
    this.#canceller.close();
  }
}

export type Aec3PeerKind = "webrtc-aec3" | "webrtc-aec3+guard";

/** A chain with AEC3 alone in the guard's place, or talkgate's guard over AEC3; the gate is `base`'s. */
export async function webrtcAec3Chain(base: ChainModules, kind: Aec3PeerKind): Promise<ChainModules> {
  const module = await webrtcAec3Module();
  if (kind === "webrtc-aec3")
    return {
      ...base,
      name: kind,
      wordsProbe: undefined,
      EchoGuard: class extends Aec3Guard {
        constructor(_create: unknown, _options: unknown, sampleRate: number) {
          super(module, sampleRate);
        }
      },
    };
  return {
    ...base,
    name: kind,
    wordsProbe: undefined,
    createEchoCanceller: ((o: { sampleRate: number; tailMs: number; doubleTalk: boolean }) =>
      new Aec3Canceller(
        module,
        o.sampleRate,
        o.tailMs,
        o.doubleTalk,
      )) as unknown as ChainModules["createEchoCanceller"],
  };
}
