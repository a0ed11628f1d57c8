/**
 * The Moonshine model's thread (moonshine-model.ts starts it): onnxruntime-node's
 * public `run` executes synchronously on the calling thread, and one decode of
 * a few seconds of speech takes tens of milliseconds, which a relay's event
 * loop cannot give. Plain JavaScript so that it loads the same way under tsx,
 * the installed bin and vitest.
 *
 * Protocol (postMessage):
 *   in  { id, audio: Float32Array (16 kHz mono, -1..1) }  out { id, text, ms } | { id, error }
 *   in  { close: true }                                    (queued decodes skipped, the running one
 *                                                           finished; releases the sessions; the thread ends)
 * At start it posts { ready: true } or { loadError: message }.
 */
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
const { encoderPath, decoderPath, threads } = workerData;

/** The tiny model's decoder: 6 layers, 8 key/value heads of 36 dimensions (moonshine-js, src/model.ts). */
const LAYERS = 6;
const KV_HEADS = 8;
const HEAD_DIM = 36;
const START_TOKEN = 1;
const END_TOKEN = 2;

let ort;
let encoder;
let decoder;
let tokenizer;

async function load() {
  ort = require("onnxruntime-node");
  tokenizer = (await import("llama-tokenizer-js")).default;
  const options = {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    // onnxruntime's CPU arena and memory patterns stay on (its defaults): without them the thread held
    // about 50 MB less but a short decode cost 2.8x the CPU (89-96 against 32-33 ms; docs/performance.md).
  };
  encoder = await ort.InferenceSession.create(encoderPath, options);
  decoder = await ort.InferenceSession.create(decoderPath, options);
}

function emptyCache() {
  const past = {};
  const empty = new Float32Array(0);
  for (let layer = 0; layer < LAYERS; layer++)
    for (const part of ["decoder", "encoder"])
      for (const kind of ["key", "value"])
        past[`past_key_values.${layer}.${part}.${kind}`] = new ort.Tensor("float32", empty, [
          0,
          KV_HEADS,
          1,
          HEAD_DIM,
        ]);
  return past;
}

/** Greedy decoding, the way the package's own model.ts does it, with the cache carried by name. */
async function transcribe(audio) {
  const seconds = audio.length / 16_000;
  // About six tokens a second of speech at most (moonshine-js's bound), and room for a short word's punctuation.
  const maxTokens = Math.ceil(seconds * 6) + 4;
  const encoded = await encoder.run({ input_values: new ort.Tensor("float32", audio, [1, audio.length]) });
  const hidden = encoded.last_hidden_state;
  const past = emptyCache();
  const tokens = [];
  let next = START_TOKEN;
  for (let step = 0; step < maxTokens; step++) {
    const out = await decoder.run({
      input_ids: new ort.Tensor("int64", BigInt64Array.of(BigInt(next)), [1, 1]),
      encoder_hidden_states: hidden,
      use_cache_branch: new ort.Tensor("bool", [step > 0]),
      ...past,
    });
    const logits = out.logits.data;
    const vocabulary = out.logits.dims[2];
    const offset = logits.length - vocabulary;
    let best = 0;
    for (let k = 1; k < vocabulary; k++) if (logits[offset + k] > logits[offset + best]) best = k;
    if (best === END_TOKEN) break;
    tokens.push(best);
    next = best;
    for (const name of Object.keys(out)) {
      if (!name.startsWith("present.")) continue;
      // The encoder's cross-attention cache is computed at the first step only; the decoder's grows each step.
      if (step > 0 && name.includes(".encoder.")) continue;
      past[`past_key_values.${name.slice("present.".length)}`] = out[name];
    }
  }
  return tokenizer.decode([START_TOKEN, ...tokens]).trim();
}

let loading = load().then(
  () => parentPort.postMessage({ ready: true }),
  (err) => parentPort.postMessage({ loadError: err instanceof Error ? err.message : String(err) }),
);

/** Set by { close }: decodes still queued are skipped, the one running ends first (never cut: see close()). */
let closing = false;

parentPort.on("message", (message) => {
  if (message && message.close) {
    closing = true;
    void loading.finally(async () => {
      await encoder?.release?.();
      await decoder?.release?.();
      parentPort.close();
    });
    return;
  }
  const { id, audio } = message;
  loading = loading.then(async () => {
    if (closing) return;
    const started = performance.now();
    try {
      const text = await transcribe(audio);
      parentPort.postMessage({ id, text, ms: performance.now() - started });
    } catch (err) {
      parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    }
  });
});
