/**
 * What a carrier's line costs the relay, per call: one second of a call both
 * ways (50 frames in, 50 frames out) through the carrier's stream codec and
 * the audio conversion the leg needs for the realtime provider, on one core,
 * in this process (no sockets: the socket and event-loop work is the same
 * for every carrier and is measured by telephony-capacity.bench.ts).
 *
 *   twilio -> u-law provider   JSON + base64 frames, u-law passed through untouched
 *   vonage -> PCM 24k provider binary L16 16 kHz frames, resampled 16k -> 24k and 24k -> 16k (OpenAI's PCM)
 *   vonage -> u-law provider   binary L16 16 kHz frames, resampled to 8 kHz and G.711-coded both ways
 *
 * Figures: µs of one core per call-second (median of --rounds slices) and
 * the calls one core could carry on that work alone. The Vonage rows are the
 * resampling cost the issue asks about.
 *
 *   node --import tsx bench/telephony-carrier-line.bench.ts [--ms 2000] [--rounds 7]
 */
import {
  bytesFromPcm16,
  createResampler,
  decodeMulaw,
  encodeMulaw,
  pcm16FromBytes,
} from "../src/codecs/index.js";
import { encodedChunk, pcmChunk, PCM16_16K, ULAW_8K } from "../src/core/index.js";
import { lineAudio } from "../src/telephony/line-audio.js";
import { twilioStreamCodec } from "../src/telephony/twilio/twilio-protocol.js";
import { vonageStreamCodec } from "../src/telephony/vonage/vonage-stream-codec.js";
import { benchArgs, num } from "./lib/bench-args.js";
import { rates } from "./lib/child-medians.js";

const args = benchArgs({ ms: "2000", rounds: "7" });
const ms = num(args.ms, "ms");
const rounds = num(args.rounds, "rounds");
const FRAMES = 50;

/** A 440 Hz tone with some noise: the resampler's work does not depend on the content, the codecs' barely. */
function tone(rate: number, samples: number): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++)
    out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate) + (Math.random() - 0.5) * 200);
  return out;
}

function twilioUlaw(): () => void {
  const codec = twilioStreamCodec({ maxBytes: 65_536 });
  codec.decode(
    Buffer.from(
      JSON.stringify({
        event: "start",
        sequenceNumber: "1",
        streamSid: "MZ0123456789abcdef0123456789abcdef",
        start: {
          streamSid: "MZ0123456789abcdef0123456789abcdef",
          accountSid: "AC0123456789abcdef0123456789abcdef",
          callSid: "CA0123456789abcdef0123456789abcdef",
          tracks: ["inbound"],
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
        },
      }),
    ),
    false,
  );
  const line = lineAudio(ULAW_8K);
  const frame = encodeMulaw(tone(8000, 160));
  const inbound = Buffer.from(
    JSON.stringify({
      event: "media",
      sequenceNumber: "2",
      streamSid: "MZ0123456789abcdef0123456789abcdef",
      media: {
        track: "inbound",
        chunk: "1",
        timestamp: "20",
        payload: Buffer.from(frame).toString("base64"),
      },
    }),
  );
  const chunk = encodedChunk(frame, ULAW_8K);
  return () => {
    for (let i = 0; i < FRAMES; i++) {
      codec.decode(inbound, false); // in: parsed, u-law handed to the provider as is
      codec.media(line.fromChunk(chunk)); // out: the provider's u-law framed as JSON + base64
    }
  };
}

function vonagePcm24k(): () => void {
  const codec = vonageStreamCodec({ maxBytes: 65_536 });
  const line = lineAudio(PCM16_16K);
  const up = createResampler({ from: 16_000, to: 24_000 });
  const down = createResampler({ from: 24_000, to: 16_000 });
  const inbound = Buffer.from(bytesFromPcm16(tone(16_000, 320)));
  const provider = tone(24_000, 480);
  return () => {
    for (let i = 0; i < FRAMES; i++) {
      const r = codec.decode(inbound, true);
      if (r.ok && r.event?.type === "media") up.process(line.toPcm(r.event.audio));
      const pcm = down.process(provider);
      codec.media(line.fromChunk(pcmChunk(pcm, PCM16_16K)));
    }
  };
}

function vonageUlaw(): () => void {
  const codec = vonageStreamCodec({ maxBytes: 65_536 });
  const line = lineAudio(PCM16_16K);
  const down = createResampler({ from: 16_000, to: 8000 });
  const up = createResampler({ from: 8000, to: 16_000 });
  const inbound = Buffer.from(bytesFromPcm16(tone(16_000, 320)));
  const provider = encodeMulaw(tone(8000, 160));
  return () => {
    for (let i = 0; i < FRAMES; i++) {
      const r = codec.decode(inbound, true);
      if (r.ok && r.event?.type === "media") encodeMulaw(down.process(pcm16FromBytes(r.event.audio)));
      const pcm = up.process(decodeMulaw(provider));
      codec.media(line.fromChunk(pcmChunk(pcm, PCM16_16K)));
    }
  };
}

const perSecond = rates(
  {
    "twilio -> u-law provider": twilioUlaw(),
    "vonage -> PCM 24k provider": vonagePcm24k(),
    "vonage -> u-law provider": vonageUlaw(),
  },
  ms,
  rounds,
);
console.log("line work per call-second (50 frames each way), one core:");
console.log("carrier -> provider".padEnd(30), "µs/call-s".padStart(10), "calls/core".padStart(12));
for (const [name, callSecondsPerSecond] of Object.entries(perSecond)) {
  const us = 1e6 / callSecondsPerSecond;
  console.log(
    name.padEnd(30),
    us.toFixed(1).padStart(10),
    Math.floor(callSecondsPerSecond).toString().padStart(12),
  );
}
