// The codec layer: typed arrays in, typed arrays out, small stateful objects per stream, no I/O.
export {
  AUDIO_ENCODINGS,
  type AudioEncoding,
  type AudioFormat,
  PCM16_16K,
  PCM16_24K,
  ULAW_8K,
  bytesPerSecond,
  durationMs,
  sameAudioFormat,
} from "./audio-format.js";
export {
  CodecError,
  CODEC_ERROR_CODES,
  isCodecError,
  type CodecErrorCode,
  type CodecErrorOptions,
} from "./codec-error.js";
export {
  SUPPORTED_SAMPLE_RATES,
  type SupportedSampleRate,
  pcm16FromBytes,
  bytesFromPcm16,
  rms,
  dbfs,
} from "./pcm.js";
export { decodeMulaw, encodeMulaw } from "./mulaw.js";
export { decodeAlaw, encodeAlaw } from "./alaw.js";
export { createResampler, type Resampler, type ResamplerOptions } from "./resampler.js";
export {
  createOpusEncoder,
  type OpusEncoder,
  type OpusEncoderOptions,
  type OpusApplication,
} from "./opus-encoder.js";
export { createOpusDecoder, type OpusDecoder, type OpusDecoderOptions } from "./opus-decoder.js";
export { parseOpusPacket, opusPacketHasFec, type OpusPacketInfo, type OpusMode } from "./opus-packet.js";
export { createVad, type Vad, type VadEvent, type VadOptions } from "./vad.js";
export { createSileroVad, type SileroVadOptions } from "./silero-vad.js";
export { sileroVadAvailable } from "./silero-model.js";
export {
  createNoiseSuppressor,
  noiseSuppressorAvailable,
  type NoiseSuppressor,
  type NoiseSuppressorOptions,
} from "./noise-suppressor.js";
export { createRnnoiseSuppressor, loadRnnoise } from "./rnnoise-suppressor.js";
export { createFrameAssembler, type FrameAssembler, type FrameAssemblerOptions } from "./frame-assembler.js";
export { readWav, writeWav, wavHeader, WAV_HEADER_BYTES, type WavAudio } from "./wav.js";
export {
  detectDtmf,
  dtmfFrequencies,
  dtmfTones,
  type DtmfDetectOptions,
  type DtmfToneOptions,
} from "./dtmf.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { createEchoCanceller, echoCancellerAvailable } from "./echo-canceller.js";
export { sileroModel } from "./silero-model.js";
