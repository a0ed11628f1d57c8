/**
 * RNNoise for the benches: the codecs' RNNoise suppressor, loaded once.
 */
import { createRnnoiseSuppressor, loadRnnoise } from "../../src/codecs/rnnoise-suppressor.js";

await loadRnnoise();

export function createRnnoise(rate: number): { process(pcm: Int16Array): Int16Array; close(): void } {
  return createRnnoiseSuppressor({ sampleRate: rate });
}
