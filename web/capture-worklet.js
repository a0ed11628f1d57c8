/**
 * The microphone's AudioWorklet: mono, resampled to the session's input rate,
 * cut into PCM16 chunks of `chunkMs`, each posted with the level of its 10 ms
 * frames (dBFS, measured at the browser's rate before resampling) for the
 * page's speech detector and meter.
 */
import { floatToPcm16, Resampler } from "./resampler.js";

class CaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { targetRate, chunkMs } = options.processorOptions;
    this.resampler = new Resampler(sampleRate, targetRate);
    this.chunkSamples = Math.round((targetRate * chunkMs) / 1000);
    this.pending = new Float32Array(this.chunkSamples * 2);
    this.pendingLength = 0;
    this.levelFrame = Math.round(sampleRate / 100);
    this.levelSum = 0;
    this.levelCount = 0;
    this.levels = [];
    this.running = true;
    this.port.onmessage = (event) => {
      if (event.data === "stop") this.running = false;
    };
  }

  process(inputs) {
    if (!this.running) return false;
    const input = inputs[0];
    const channel = input && input[0];
    if (!channel) return true;
    this.#measure(channel);
    this.#collect(this.resampler.process(channel));
    return true;
  }

  #measure(samples) {
    for (let i = 0; i < samples.length; i++) {
      this.levelSum += samples[i] * samples[i];
      if (++this.levelCount === this.levelFrame) {
        const rms = Math.sqrt(this.levelSum / this.levelCount);
        this.levels.push(rms > 0 ? 20 * Math.log10(rms) : -120);
        this.levelSum = 0;
        this.levelCount = 0;
      }
    }
  }

  #collect(samples) {
    let offset = 0;
    while (offset < samples.length) {
      const take = Math.min(samples.length - offset, this.chunkSamples - this.pendingLength);
      this.pending.set(samples.subarray(offset, offset + take), this.pendingLength);
      this.pendingLength += take;
      offset += take;
      if (this.pendingLength === this.chunkSamples) {
        const pcm = floatToPcm16(this.pending.subarray(0, this.chunkSamples));
        const levels = this.levels;
        this.levels = [];
        this.pendingLength = 0;
        this.port.postMessage({ pcm, levels }, [pcm.buffer]);
      }
    }
  }
}

registerProcessor("talk-capture", CaptureProcessor);
