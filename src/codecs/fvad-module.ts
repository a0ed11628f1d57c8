/**
 * One WebAssembly instance of libfvad (the WebRTC VAD) per process, shared by
 * every VAD. Top-level await keeps createVad() synchronous.
 */
import { CodecError } from "./codec-error.js";

export interface FvadModule {
  HEAP16: Int16Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  _fvad_new(): number;
  _fvad_free(inst: number): void;
  _fvad_reset(inst: number): void;
  _fvad_set_mode(inst: number, mode: number): number;
  _fvad_set_sample_rate(inst: number, rate: number): number;
  _fvad_process(inst: number, frame: number, length: number): number;
}

async function load(): Promise<FvadModule> {
  try {
    const { default: factory } = await import("@echogarden/fvad-wasm");
    return (await factory()) as FvadModule;
  } catch (err) {
    return Promise.reject(
      new CodecError("codec_unavailable", "the WebRTC VAD (fvad wasm) could not be loaded", { cause: err }),
    );
  }
}

export const fvad: FvadModule = await load();
