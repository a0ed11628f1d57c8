import { bytesFromPcm16, pcm16FromBytes } from "../../codecs/pcm.js";
import { cancelledError } from "../abortable.js";
import type { OutputAudioPayload } from "../talk-events.js";
import type { TtsProvider } from "../provider-types.js";
import type { TalkSession } from "../session-types.js";
import type { AudioFormat } from "../talk-types.js";
import { durationMs } from "../talk-types.js";
import type { TalkAudioSink } from "./controller-types.js";
import { PcmConverter } from "./pcm-converter.js";

/** What speaking needs: narrow, no back-reference to the controller. */
export interface TtsOutputContext {
  session: TalkSession;
  tts: TtsProvider;
  outputFormat: AudioFormat;
  voice: string | undefined;
  speed: number;
  /** Read on every write: the sink can be replaced mid-answer (talk.session.join). */
  sink(): TalkAudioSink | undefined;
}

/**
 * Renders `text` as the turn's output item `itemId` (already begun with
 * session.beginOutput): TTS runs as output-scoped "tts" work, its audio is
 * converted to the session's output format and written to the sink, and the
 * events carry metadata only. Resolves when the audio is done; rejects
 * `cancelled` when the output or turn was cancelled (the synthesizer is
 * aborted with it, and nothing is written to the sink after the abort).
 */
export function speak(ctx: TtsOutputContext, turnId: string, itemId: string, text: string): Promise<void> {
  const { session, outputFormat } = ctx;
  return session.runWork(
    "tts",
    async (signal) => {
      let converter: PcmConverter | undefined;
      let started = false;
      let totalBytes = 0;
      const deliver = (pcm: Int16Array): void => {
        // Checked right before the write: cancellation is synchronous, so nothing reaches the sink after it.
        if (pcm.length === 0 || signal.aborted) return;
        const data = bytesFromPcm16(pcm);
        if (!started) {
          started = true;
          session.emit({ type: "output.audio.started", turnId, itemId, payload: { format: { ...outputFormat } } });
        }
        totalBytes += data.byteLength;
        ctx.sink()?.write({ data, format: outputFormat }, { turnId, itemId });
        const payload: OutputAudioPayload = {
          format: { ...outputFormat },
          bytes: data.byteLength,
          durationMs: durationMs(outputFormat, data.byteLength),
        };
        session.emit({ type: "output.audio.delta", turnId, itemId, payload });
      };
      try {
        const request = {
          text,
          speed: ctx.speed,
          format: outputFormat,
          signal,
          ...(ctx.voice !== undefined ? { voice: ctx.voice } : {}),
        };
        for await (const chunk of ctx.tts.synthesize(request)) {
          if (signal.aborted) break;
          if (!converter || !sameFormat(converter.from, chunk.format)) {
            if (converter) deliver(converter.flush());
            converter?.close();
            converter = new PcmConverter(chunk.format, outputFormat);
          }
          deliver(converter.convert(pcm16FromBytes(chunk.data)));
        }
        if (signal.aborted) throw cancelledError(signal);
        if (converter) deliver(converter.flush());
        // Done means heard: until the sink confirms playback, the answer can still be interrupted.
        await ctx.sink()?.drained?.(itemId, signal);
        if (signal.aborted) throw cancelledError(signal);
        const done: OutputAudioPayload = {
          format: { ...outputFormat },
          bytes: totalBytes,
          durationMs: durationMs(outputFormat, totalBytes),
        };
        session.emit({ type: "output.audio.done", turnId, itemId, final: true, payload: done });
      } finally {
        converter?.close();
      }
    },
    { turnId, scope: "output" },
  );
}

function sameFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate && a.channels === b.channels;
}
