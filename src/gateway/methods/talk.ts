import { abortWith, TalkError, toTalkError } from "../../core/index.js";
import { durationMs } from "../../core/index.js";
import { audioBytes, sameAudioFormat, type AudioFormat } from "../../core/index.js";
import type { MethodGroup } from "../method-registry.js";

/**
 * Discovery, configuration, one-shot speech and the foreground node mode:
 * the methods that hold no live session state.
 */
export const talkMethods: MethodGroup = {
  "talk.catalog": {
    scope: "read",
    handler: async (_params, ctx) => ctx.deps.catalog(),
  },

  "talk.config": {
    scope: "read",
    // Secrets are redacted by the config module unless the caller is admin.
    handler: async (_params, ctx) =>
      ctx.deps.effectiveConfig({ admin: ctx.caller.principal.scopes.has("admin") }),
  },

  "talk.speak": {
    scope: "write",
    handler: async (params, ctx) => {
      const max = ctx.options.maxSpeakChars;
      if (params.text.length > max) {
        throw new TalkError("invalid_params", `text is longer than ${max} characters.`, {
          details: { issues: [{ path: "text", message: `at most ${max} characters` }] },
        });
      }
      // Our own controller stops synthesis when we give up early (too large, bad stream),
      // the caller's signal when the connection or the server goes away. Followed through one removable
      // listener, not AbortSignal.any: Node 20 keeps a trace of every such signal on the connection's.
      const stop = new AbortController();
      abortWith(ctx.caller.signal, stop);
      const signal = stop.signal;
      const parts: Uint8Array[] = [];
      let format: AudioFormat | undefined;
      let bytes = 0;
      try {
        const request = {
          text: params.text,
          ...(params.voice !== undefined ? { voice: params.voice } : {}),
          ...(params.speed !== undefined ? { speed: params.speed } : {}),
          ...(params.format !== undefined ? { format: params.format } : {}),
        };
        for await (const chunk of ctx.deps.speak(request, signal)) {
          signal.throwIfAborted();
          if (!format) format = chunk.format;
          else if (!sameAudioFormat(format, chunk.format)) {
            throw new TalkError("provider_error", "The TTS provider changed audio format mid-stream.");
          }
          // talk.speak answers the wire bytes of the TTS's format (PCM16 little-endian, or encoded as asked).
          const data = audioBytes(chunk);
          bytes += data.byteLength;
          if (bytes > ctx.options.maxSpeakAudioBytes) {
            throw new TalkError(
              "payload_too_large",
              `The synthesized audio exceeds ${ctx.options.maxSpeakAudioBytes} bytes.`,
            );
          }
          parts.push(data);
        }
        signal.throwIfAborted();
      } catch (err) {
        if (signal.aborted && !(err instanceof TalkError))
          throw new TalkError("cancelled", "talk.speak was cancelled.", { cause: err });
        throw toTalkError(err, "provider_error");
      } finally {
        stop.abort(new TalkError("cancelled", "talk.speak finished"));
      }
      if (!format) throw new TalkError("provider_error", "The TTS provider produced no audio.");
      const audio = Buffer.concat(parts);
      return {
        format,
        audioBase64: audio.toString("base64"),
        bytes,
        durationMs: Math.round(durationMs(format, bytes)),
      };
    },
  },

  "talk.mode": {
    scope: "read",
    // Reading is harmless; changing what every node shows needs write.
    scopeFor: (params) => (params.enabled === undefined && params.phase === undefined ? "read" : "write"),
    handler: (params, ctx) => {
      if (params.enabled === undefined) {
        if (params.phase !== undefined) {
          throw new TalkError("invalid_params", "phase is set together with enabled.", {
            details: { issues: [{ path: "enabled", message: "required when phase is given" }] },
          });
        }
        return ctx.mode.state;
      }
      return ctx.mode.set(params.enabled, params.phase);
    },
  },
};
