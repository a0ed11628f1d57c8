/**
 * Which Talk session a page mode asks for, read from `talk.catalog` (the
 * creation matrix with availability, the providers' declared formats):
 *
 * - conversation: realtime over gateway-relay when a relay-capable realtime
 *   provider is configured, else stt-tts over managed-room; turns come from
 *   the provider (realtime) or from the page's speech onset with the server's
 *   VAD ending them (stt-tts);
 * - push-to-talk: stt-tts over managed-room, turns from the button;
 * - captions: transcription over gateway-relay, audio streamed continuously.
 *
 * The input format is the one the provider takes (the page resamples once, in
 * its capture worklet; the server then forwards without resampling), the
 * output format the one the provider speaks (Web Audio resamples on playback).
 */

const PCM16_16K = { encoding: "pcm16", sampleRate: 16000, channels: 1 };
const PCM16_24K = { encoding: "pcm16", sampleRate: 24000, channels: 1 };

/**
 * @param {"conversation"|"push-to-talk"|"captions"} mode
 * @param {object} catalog the talk.catalog payload
 * @returns {{params: object, turns: "provider"|"detector"|"button"|"stream", inputFormat: object, outputFormat?: object, label: string}}
 */
export function planSession(mode, catalog) {
  const available = (m, t, b) =>
    (catalog.creationMatrix ?? []).some(
      (c) => c.mode === m && c.transport === t && c.brain === b && c.available,
    );
  const provider = (kind, pick = () => true) => {
    const of = (catalog.providers ?? []).filter((p) => p.kind === kind && pick(p));
    return of.find((p) => p.default) ?? of[0];
  };
  const pcm = (formats, fallback) =>
    (formats ?? []).find((f) => f.encoding === "pcm16" && f.channels === 1) ?? fallback;

  if (mode === "conversation" && available("realtime", "gateway-relay", "agent-consult")) {
    const realtime = provider("realtime", (p) => p.capabilities?.gatewayRelay === true);
    const format = pcm(realtime?.capabilities?.inputFormats, PCM16_24K);
    return {
      // The page reports what its speaker played (playback on appendAudio): declared, so the Gateway
      // trusts its reports from the first audio, not the writes until a first report.
      params: {
        mode: "realtime",
        transport: "gateway-relay",
        inputFormat: format,
        outputFormat: format,
        playbackReports: true,
      },
      turns: "provider",
      inputFormat: format,
      outputFormat: format,
      label: `realtime · gateway-relay · ${realtime?.id ?? "realtime"}`,
    };
  }
  if (mode === "captions") {
    if (!available("transcription", "gateway-relay", "none"))
      throw new Error("This server has no speech-to-text.");
    const format = pcm(provider("stt")?.capabilities?.inputFormats, PCM16_16K);
    return {
      params: { mode: "transcription", transport: "gateway-relay", inputFormat: format },
      turns: "stream",
      inputFormat: format,
      label: `transcription · gateway-relay · ${provider("stt")?.id ?? "stt"}`,
    };
  }
  if (!available("stt-tts", "managed-room", "agent-consult"))
    throw new Error("This server has no speech-to-text, agent and text-to-speech to talk with.");
  const input = pcm(provider("stt")?.capabilities?.inputFormats, PCM16_16K);
  const output = pcm(provider("tts")?.capabilities?.outputFormats, PCM16_24K);
  return {
    params: {
      mode: "stt-tts",
      transport: "managed-room",
      inputFormat: input,
      outputFormat: output,
      playbackReports: true,
    },
    turns: mode === "conversation" ? "detector" : "button",
    inputFormat: input,
    outputFormat: output,
    label: `stt-tts · managed-room · ${provider("stt")?.id ?? "stt"} + ${provider("tts")?.id ?? "tts"}`,
  };
}
