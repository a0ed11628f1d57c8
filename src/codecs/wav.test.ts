import { describe, expect, it } from "vitest";
import { decodeAlaw } from "./alaw.js";
import { decodeMulaw } from "./mulaw.js";
import {
  bytesOf,
  loadSpeech,
  readBytes,
  run,
  SPEECH_DIR,
  toInt16,
  withTempDir,
  writeTemp,
} from "./testing/audio-tools.js";
import { readWav, writeWav } from "./wav.js";

describe("readWav / writeWav", () => {
  it("reads a real recording to the same samples sox decodes", () => {
    const wav = readWav(readBytes(`${SPEECH_DIR}/cards/001.wav`));
    expect(wav.format).toEqual({ encoding: "pcm16", sampleRate: 16000, channels: 1 });
    expect(wav.pcm).toEqual(loadSpeech("cards/001.wav", 16000));
  });

  it("writes a file ffmpeg reads back sample for sample, stereo included", () => {
    const pcm = loadSpeech("goforward.raw", 16000).subarray(0, 16000);
    const stereo = new Int16Array(pcm.length * 2);
    pcm.forEach((v, i) => {
      stereo[2 * i] = v;
      stereo[2 * i + 1] = -v;
    });
    withTempDir((dir) => {
      const path = writeTemp(dir, "out.wav", writeWav(stereo, { sampleRate: 16000, channels: 2 }));
      const probe = run("ffprobe", [
        "-v",
        "error",
        "-show_entries",
        "stream=sample_rate,channels,codec_name",
        "-of",
        "csv=p=0",
        path,
      ])
        .toString()
        .trim();
      expect(probe).toBe("pcm_s16le,16000,2");
      expect(toInt16(run("ffmpeg", ["-v", "error", "-i", path, "-f", "s16le", "pipe:1"]))).toEqual(stereo);
    });
    const back = readWav(writeWav(stereo, { sampleRate: 16000, channels: 2 }));
    expect(back.format.channels).toBe(2);
    expect(back.pcm).toEqual(stereo);
  });

  it("reads u-law, A-law, 8/24/32-bit and float WAV files as PCM16", () => {
    const pcm = loadSpeech("numbers.raw", 8000).subarray(0, 8000);
    withTempDir((dir) => {
      const src = writeTemp(dir, "in.raw", bytesOf(pcm));
      const input = ["-v", "error", "-f", "s16le", "-ar", "8000", "-ac", "1", "-i", src];
      run("ffmpeg", [...input, "-c:a", "pcm_mulaw", `${dir}/u.wav`]);
      for (const codec of ["pcm_alaw", "pcm_u8", "pcm_s24le", "pcm_s32le", "pcm_f32le"])
        run("ffmpeg", [...input, "-c:a", codec, `${dir}/${codec}.wav`]);
      const ulaw = readWav(readBytes(`${dir}/u.wav`));
      const mulawBytes = new Uint8Array(run("ffmpeg", [...input, "-f", "mulaw", "pipe:1"]));
      expect(ulaw.format.sampleRate).toBe(8000);
      expect(ulaw.pcm).toEqual(decodeMulaw(mulawBytes));
      const alawBytes = new Uint8Array(run("ffmpeg", [...input, "-f", "alaw", "pipe:1"]));
      expect(readWav(readBytes(`${dir}/pcm_alaw.wav`)).pcm).toEqual(decodeAlaw(alawBytes));
      expect(readWav(readBytes(`${dir}/pcm_s24le.wav`)).pcm).toEqual(pcm);
      expect(readWav(readBytes(`${dir}/pcm_s32le.wav`)).pcm).toEqual(pcm);
      expect(readWav(readBytes(`${dir}/pcm_f32le.wav`)).pcm).toEqual(pcm);
      expect(readWav(readBytes(`${dir}/pcm_u8.wav`)).pcm).toEqual(
        Int16Array.from(pcm, (v) => ((v + 32768) >> 8) * 256 - 32768),
      );
    });
  });

  it("rejects bytes that are not a WAV file with invalid_audio", () => {
    expect(() => readWav(new Uint8Array([1, 2, 3, 4]))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => readWav(new TextEncoder().encode("RIFF....WAVEjunk"))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
  });

  it("rejects a partial stereo frame and a bad rate", () => {
    expect(() => writeWav(new Int16Array(3), { sampleRate: 8000, channels: 2 })).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => writeWav(new Int16Array(2), { sampleRate: Number.NaN })).toThrow(
      expect.objectContaining({ code: "unsupported_rate" }),
    );
  });
});
