/**
 * `talkgate call FILE.wav`: a simulated phone call against a running server,
 * the way Twilio places one. It posts the voice webhook (unsigned in the
 * server's local demo mode; signed when TWILIO_AUTH_TOKEN and PUBLIC_URL are
 * set), opens the stream WebSocket from the TwiML, speaks the recording as
 * the caller once the greeting has played (any WAV, converted to u-law 8 kHz
 * by the codecs layer), keeps the line open with silence before it and until
 * the assistant has answered after it, prints the
 * call's transcript live from `GET /telephony/calls/:callSid/events`, and
 * writes what the assistant said (as the caller heard it) to a WAV file.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createResampler } from "../codecs/index.js";
import { decodeMulaw, encodeMulaw } from "../codecs/index.js";
import { readWav, writeWav } from "../codecs/index.js";
import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import { computeTwilioSignature } from "../telephony/index.js";
import { CallProgress } from "./call-progress.js";
import { SimulatedTwilioStream } from "./simulated-twilio-stream.js";

/** Options of `talkgate call`. */
export interface CallOptions {
  /** The caller's recording (WAV, any rate and sample format). Required. */
  file: string;
  /** The server's base URL. Default: the server `npm start` runs here (`defaultServerUrl`). */
  url?: string;
  /** Where the assistant's audio is written (WAV, 8 kHz mono). Default `defaultAnswerPath()`. */
  out?: string;
  /** Call mode; default: the server's choice for the number (telephony.defaultMode). */
  mode?: "realtime" | "stt-tts";
  /** Admin bearer token, for servers with auth.tokens (TALKGATE_ADMIN_TOKEN). Default none. */
  token?: string;
  /** Hang up after this many seconds whatever happens. Default 60. */
  maxSeconds?: number;
  /** Silence after the last event, with no answer pending or playing, that ends the call, ms. Default 3000. */
  quietMs?: number;
  /**
   * Speak the recording from the first frame, over the greeting, instead of once the greeting has played
   * (or none started within GREETING_WAIT_MS). Default false.
   */
  overGreeting?: boolean;
  /** Caller and called numbers. Defaults "+15550100001" and "+15550100002". */
  from?: string;
  to?: string;
}

export interface CallIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

const FRAME = 160;
/** How long the caller waits for a greeting to start before speaking anyway, ms. */
export const GREETING_WAIT_MS = 2000;

/**
 * Whether the caller may start speaking: the first output (the greeting) has ended and played out,
 * or none started within GREETING_WAIT_MS.
 */
export function greetingOver(progress: CallProgress, playing: boolean, elapsedMs: number): boolean {
  if (progress.answersStarted === 0) return elapsedMs >= GREETING_WAIT_MS;
  return progress.answersEnded > 0 && progress.outputs === 0 && !playing;
}

/**
 * The server a call goes to without `--url`: the one `npm start` runs with the same environment, on
 * `PORT` (8787 when unset or 0) and `HOST` (loopback when unset or a wildcard address).
 */
export function defaultServerUrl(env: NodeJS.ProcessEnv): string {
  const port = env.PORT !== undefined && /^\d+$/.test(env.PORT) && Number(env.PORT) > 0 ? env.PORT : "8787";
  const host = env.HOST && !["0.0.0.0", "::", "[::]"].includes(env.HOST) ? env.HOST : "127.0.0.1";
  return `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/** Where the answer goes without `--out`: the system's temporary directory, never the working tree. */
export function defaultAnswerPath(): string {
  return join(tmpdir(), "talkgate-answer.wav");
}

export async function runCall(options: CallOptions, io: CallIo): Promise<number> {
  const base = (options.url ?? defaultServerUrl(process.env)).replace(/\/+$/, "");
  const out = options.out ?? defaultAnswerPath();
  const maxMs = (options.maxSeconds ?? 60) * 1000;
  const quietMs = options.quietMs ?? 3000;
  if (!Number.isFinite(maxMs) || maxMs <= 0)
    throw new TalkError("invalid_params", "--max-seconds must be a positive number.");
  const caller = wavToUlaw8k(options.file);
  io.stderr(`caller audio: ${options.file}, ${(caller.length / 8000).toFixed(1)} s`);

  const callSid = `CA${randomBytes(16).toString("hex")}`;
  const accountSid = `AC${randomBytes(16).toString("hex")}`;
  const twiml = await postVoiceWebhook(base, options, {
    CallSid: callSid,
    AccountSid: accountSid,
    From: options.from ?? "+15550100001",
    To: options.to ?? "+15550100002",
    Direction: "inbound",
    CallStatus: "ringing",
  });
  const streamUrl = /<Stream[^>]*\surl="([^"]+)"/.exec(twiml)?.[1];
  if (!streamUrl) throw new TalkError("provider_error", "The voice webhook answered no <Stream url>.");
  const parameters = Object.fromEntries(
    [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g)].map((m) => [
      m[1]!,
      unescapeXml(m[2]!),
    ]),
  );

  const stream = new SimulatedTwilioStream({
    url: unescapeXml(streamUrl),
    callSid,
    accountSid,
    customParameters: parameters,
  });
  await stream.connect();
  io.stderr(
    `call ${callSid} connected; ${options.overGreeting ? "speaking..." : "listening to the greeting..."}`,
  );

  const watch = new AbortController();
  const progress = new CallProgress(io, Boolean(process.env["TALKGATE_CALL_DEBUG"]));
  const watching = watchCall(base, callSid, options.token, (e) => progress.observe(e), watch.signal).catch(
    (err: unknown) => {
      io.stderr(`transcript unavailable: ${(err as Error).message}`);
    },
  );

  const started = performance.now();
  const silence = new Uint8Array(FRAME).fill(0xff);
  let frames = 0;
  // Where the recording starts: after the greeting (a caller who talks over it is heard as its echo on a
  // speakerphone line, and a real caller listens first), unless --over-greeting.
  let callerFrom: number | undefined = options.overGreeting ? 0 : undefined;
  // 1x, like a phone line: frame n leaves at start + 20 ms * n; silence before and after the recording.
  for (;;) {
    if (!stream.open || progress.sessionClosed) break;
    const now = performance.now();
    if (now - started > maxMs) {
      io.stderr(`hanging up after ${options.maxSeconds ?? 60} s`);
      break;
    }
    if (callerFrom === undefined && greetingOver(progress, stream.playing, now - started)) {
      callerFrom = frames;
      if (frames > 0) io.stderr(`greeting over at ${((now - started) / 1000).toFixed(1)} s; speaking...`);
    }
    const at = callerFrom === undefined ? -1 : (frames - callerFrom) * FRAME;
    const sentAll = at >= caller.length;
    if (
      sentAll &&
      !progress.awaitingAnswer &&
      progress.outputs === 0 &&
      !stream.playing &&
      now - progress.lastEventAt >= quietMs
    )
      break;
    stream.sendFrame(at < 0 || sentAll ? silence : padFrame(caller.subarray(at, at + FRAME)));
    frames++;
    const wait = started + frames * 20 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await stream.stop();
  // The events stream ends with session.closed; give it a moment, then stop watching.
  await Promise.race([watching, new Promise((r) => setTimeout(r, 2000))]);
  watch.abort();

  const ulaw = concat(stream.played);
  writeFileSync(out, writeWav(decodeMulaw(ulaw), { sampleRate: 8000 }));
  io.stderr(`assistant audio: ${(ulaw.length / 8000).toFixed(1)} s -> ${out}`);
  return 0;
}

/** Any WAV as u-law 8 kHz mono: downmixed, resampled (speex), encoded (G.711). */
export function wavToUlaw8k(path: string): Uint8Array {
  const wav = readWav(new Uint8Array(readFileSync(path)));
  const { channels, sampleRate } = wav.format;
  let mono = wav.pcm;
  if (channels > 1) {
    mono = new Int16Array(wav.pcm.length / channels);
    for (let i = 0; i < mono.length; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += wav.pcm[i * channels + c]!;
      mono[i] = Math.round(sum / channels);
    }
  }
  const resampler = createResampler({ from: sampleRate, to: 8000 });
  try {
    const a = resampler.process(mono);
    const b = resampler.flush();
    const pcm = new Int16Array(a.length + b.length);
    pcm.set(a);
    pcm.set(b, a.length);
    return encodeMulaw(pcm);
  } finally {
    resampler.close();
  }
}

async function postVoiceWebhook(
  base: string,
  options: CallOptions,
  params: Record<string, string>,
): Promise<string> {
  const path = `/telephony/twilio/voice${options.mode ? `?mode=${options.mode}` : ""}`;
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const authToken = process.env["TWILIO_AUTH_TOKEN"];
  const publicUrl = process.env["PUBLIC_URL"];
  if (authToken && publicUrl)
    headers["x-twilio-signature"] = computeTwilioSignature(
      authToken,
      `${publicUrl.replace(/\/+$/, "")}${path}`,
      params,
    );
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, { method: "POST", headers, body: new URLSearchParams(params) });
  } catch (cause) {
    throw new TalkError(
      "provider_unavailable",
      `No server at ${base}: start one with \`npm start\` (on another port: set PORT for both, or pass --url).`,
      {
        cause,
      },
    );
  }
  if (res.status !== 200)
    throw new TalkError(
      "provider_error",
      `The voice webhook answered ${res.status}: ${(await res.text()).slice(0, 200)}`,
    );
  return res.text();
}

/** Reads the call's talk.events (Server-Sent Events) until session.closed or abort. */
async function watchCall(
  base: string,
  callSid: string,
  token: string | undefined,
  onEvent: (e: TalkEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await fetch(`${base}/telephony/calls/${callSid}/events`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`events answered ${res.status}`);
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        if (data) onEvent(JSON.parse(data) as TalkEvent);
      }
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

function padFrame(frame: Uint8Array): Uint8Array {
  if (frame.length === FRAME) return frame;
  const out = new Uint8Array(FRAME).fill(0xff);
  out.set(frame);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function unescapeXml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
