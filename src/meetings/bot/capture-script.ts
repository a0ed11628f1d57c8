/**
 * The script the bot injects into the meeting page before any page script
 * runs (puppeteer `evaluateOnNewDocument`). It is a plain JavaScript string,
 * not a serialized TypeScript function: a bundler's helpers (e.g. esbuild's
 * `__name`) would not exist in the page.
 *
 * What it does in the page:
 * - replaces `RTCPeerConnection` with a subclass that reports every remote
 *   audio track (`track` event) exactly once;
 * - encodes each remote track as Opus with WebCodecs `AudioEncoder` fed by a
 *   `MediaStreamTrackProcessor`, or, where WebCodecs is unavailable (a
 *   non-secure page, an old browser, or `forcePcm`), sends PCM16 from a Web
 *   Audio ScriptProcessor;
 * - skips the encoder while an Opus track is silent (every sample under
 *   `SILENCE_PEAK` for `SILENCE_HOLD_MS`): the encoder is drained at a packet
 *   boundary and the silent time goes out as `silence` frames (a sample count,
 *   capture-framing.ts) every `SILENCE_REPORT_MS`, which the server decodes as
 *   zeros, so its timeline and VAD run as if the silence had been sent;
 * - sends media as binary frames (capture-framing.ts) and track metadata as
 *   JSON text on one WebSocket to the server;
 * - every `sourceIntervalMs`, reports per track the RTP sources (SSRCs and,
 *   on mixed SFU streams, CSRCs) whose packets arrived since the last report
 *   and were not silent, with their audio levels, from the track's
 *   RTCRtpReceiver (speaker attribution, speaker-attribution.ts); a track whose
 *   decoded audio is silent is not asked (no source on it can be above
 *   `SOURCE_MIN_LEVEL` then: its mix is quieter than that). Chromium
 *   fills these only for a track that is being played out, so each track is
 *   also attached to a muted audio element;
 * - where the platform sends one mixed stream beside per-speaker copies
 *   (`preferStream`), captures only the mix (falling back to every track
 *   when no mix arrives);
 * - overrides `getUserMedia`: the microphone is a Web Audio
 *   `MediaStreamAudioDestinationNode` behind a gain that stays at 0 except
 *   while assistant audio (binary frames from the server) is playing; in
 *   `microphone: "silent"` (transcribe mode) its audio graph stays suspended
 *   until such audio arrives.
 */
export interface CaptureScriptConfig {
  /** ws:// URL of this bot's capture socket, with its token. */
  url: string;
  /** Skip WebCodecs and send PCM16 (exercises the fallback). */
  forcePcm?: boolean;
  /** Opus bitrate, bits per second. */
  opusBitrate?: number;
  /** Opus encoder complexity, 0..10 (libopus). Default 3 (0 measured less accurate captions). */
  opusComplexity?: number;
  /** Opus frame duration, ms (10, 20, 40 or 60). Default 60: a third of the packets of 20 ms. */
  opusFrameMs?: number;
  /** How often active RTP sources are reported, ms. Default 200. */
  sourceIntervalMs?: number;
  /**
   * Skip the Opus encoder while a track is silent and send `silence` frames
   * instead (default true). false: every frame is encoded, as before.
   */
  skipSilence?: boolean;
  /**
   * The bot's camera when the page asks for one: "off" (no video track) or
   * "card" (a canvas the page draws: the bot's name, a speaking indicator,
   * the last caption; its captureStream is the camera). Default "off".
   */
  camera?: "off" | "card" | "url";
  /** The name on the card. */
  botName?: string;
  /** Frames a second the camera canvas is drawn and captured at ("card", "url"). Default 5 (the bot passes meetings.camera.fps). */
  cameraFps?: number;
  /**
   * The camera track's frame rate, where the platform needs more than the
   * drawing rate (Meet: 30, PlatformDriver.cameraFrameRate). The track then
   * announces it, while new frames still come as often as the canvas is drawn.
   */
  cameraTrackFps?: number;
  /**
   * Receive the participants' video (default true). false: every video
   * section the page describes is answered as not receiving (`recvonly` ->
   * `inactive`, `sendrecv` -> `sendonly`), so nobody sends the bot video it
   * would decode and never show.
   */
  receiveVideo?: boolean;
  /**
   * Capture only the remote audio whose stream or track id contains this text
   * (case-insensitive), where the platform sends the meeting as one mix plus
   * per-speaker tracks already inside it (Teams: `mainAudio`; capturing both
   * doubles every word). Other tracks are held; if no such stream arrives
   * within `preferStreamGraceMs` of the first track, every held track is
   * captured instead (fail open) and the page says so.
   */
  preferStream?: string;
  /** Default 15 000 (Vexa's teams-main-audio.ts grace). */
  preferStreamGraceMs?: number;
  /**
   * "assistant" (default): the microphone's audio graph runs from the page's
   * first getUserMedia, ready for the assistant's voice. "silent" (a bot that
   * never speaks: transcribe mode, whose platform microphone stays off): the
   * graph stays suspended, so the page renders no audio for it (an audio
   * thread waking every 10 ms for nothing), until assistant audio arrives
   * anyway.
   */
  microphone?: "assistant" | "silent";
}

export function captureScript(config: CaptureScriptConfig): string {
  return `(() => {\nconst CFG = ${JSON.stringify(config)};\n${PAGE_CAPTURE}\n})();`;
}

const PAGE_CAPTURE = String.raw`
if (window !== window.top || window.__talkgateCapture) return;
window.__talkgateCapture = true;
const NativePC = window.RTCPeerConnection;
const textEncoder = new TextEncoder();
const tracks = new Map();
// trackId -> { track, receiver, seen: Map<"s"|"c" + source, timestamp>, sink, silent }
const receivers = new Map();
// Levels below this are silence: not reported (speech is around 0.01..0.5).
const SOURCE_MIN_LEVEL = 0.002;
// A decoded 10 ms frame whose every sample is under this (-60 dBFS) is silent: far below any speech a
// recognizer or the server's VAD could use, and below SOURCE_MIN_LEVEL (a peak is never under its RMS).
const SILENCE_PEAK = 0.001;
// Encoding goes on this long after the last sound (word gaps, soft word ends): only real pauses are skipped.
const SILENCE_HOLD_MS = 400;
// Skipped silence is reported this often (the server's VAD ends an utterance on it: captions wait on this).
const SILENCE_REPORT_MS = 100;
let ws = null;
let open = false;
let pending = [];

function hasWebCodecs() {
  return typeof AudioEncoder === "function" && typeof MediaStreamTrackProcessor === "function";
}

function frame(kind, trackId, channels, rate, payload) {
  const id = textEncoder.encode(trackId);
  const out = new Uint8Array(8 + id.length + payload.byteLength);
  const view = new DataView(out.buffer);
  view.setUint8(0, kind);
  view.setUint8(1, channels);
  view.setUint16(2, id.length, true);
  view.setUint32(4, rate, true);
  out.set(id, 8);
  out.set(payload, 8 + id.length);
  return out.buffer;
}

function send(message) {
  if (open) {
    // A stalled socket must not grow memory without bound: drop media rather than queue it.
    if (ws.bufferedAmount < 4000000) ws.send(message);
  } else if (pending.length < 1000) {
    pending.push(message);
  }
}

function sendText(message) {
  send(JSON.stringify(message));
}

function report(trackId, err) {
  sendText({ type: "capture-error", trackId, message: String((err && err.message) || err) });
}

function connect() {
  ws = new WebSocket(CFG.url);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {
    open = true;
    ws.send(JSON.stringify({ type: "hello", webCodecs: hasWebCodecs() && !CFG.forcePcm, userAgent: navigator.userAgent }));
    for (const m of pending) ws.send(m);
    pending = [];
  };
  ws.onmessage = (event) => {
    if (typeof event.data === "string") {
      const m = JSON.parse(event.data);
      if (m.type === "clear") clearAssistant();
      else if (m.type === "card" && typeof m.caption === "string") card.caption = m.caption.slice(0, 300);
    } else {
      playAssistant(event.data);
    }
  };
  // No reconnect: the server notices a lost capture socket and decides (capture_failed).
  ws.onclose = () => { open = false; };
}

let silenceScratch = null;

/** Whether every sample of every channel of an AudioData is under SILENCE_PEAK (throws if it cannot be read). */
function isSilent(data) {
  const n = data.numberOfFrames;
  if (!silenceScratch || silenceScratch.length < n) silenceScratch = new Float32Array(n);
  for (let c = 0; c < data.numberOfChannels; c++) {
    data.copyTo(silenceScratch, { planeIndex: c, format: "f32-planar" });
    for (let i = 0; i < n; i++) {
      const v = silenceScratch[i];
      if (v > SILENCE_PEAK || v < -SILENCE_PEAK) return false;
    }
  }
  return true;
}

function silenceFrame(trackId, channels, rate, samples) {
  const count = new Uint8Array(4);
  new DataView(count.buffer).setUint32(0, samples, true);
  return frame(4, trackId, channels, rate, count);
}

async function captureOpus(track) {
  const reader = new MediaStreamTrackProcessor({ track }).readable.getReader();
  const watched = receivers.get(track.id);
  let encoder = null;
  let channels = 1;
  let rate = 48000;
  // Samples given to the encoder since it was configured: it holds a partial packet unless a multiple of
  // frameSamples; it is drained for silence only on a whole packet, so no audio is padded or moved.
  let fed = 0;
  let frameSamples = 0;
  let quiet = 0; // samples under SILENCE_PEAK since the last sound
  let skipping = CFG.skipSilence !== false;
  let silent = false; // the encoder is drained; silent audio is counted, not encoded
  let skipped = 0; // silent samples not yet reported
  // Silence frames go out once the encoder's last packet did (its flush), never before it.
  let drained = Promise.resolve();
  const reportSilence = () => {
    if (skipped === 0) return;
    const samples = skipped;
    skipped = 0;
    drained = drained.then(() => send(silenceFrame(track.id, channels, rate, samples)));
  };
  const setSilent = (value) => {
    silent = value;
    if (watched) watched.silent = value;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!encoder) {
        channels = Math.min(2, value.numberOfChannels);
        rate = value.sampleRate;
        frameSamples = Math.round((rate * (CFG.opusFrameMs || 60)) / 1000);
        encoder = new AudioEncoder({
          output: (chunk) => {
            const packet = new Uint8Array(chunk.byteLength);
            chunk.copyTo(packet);
            send(frame(1, track.id, channels, rate, packet));
          },
          error: (err) => report(track.id, err),
        });
        encoder.configure({
          codec: "opus",
          sampleRate: rate,
          numberOfChannels: channels,
          bitrate: CFG.opusBitrate || 32000,
          opus: { complexity: CFG.opusComplexity ?? 3, frameDuration: (CFG.opusFrameMs || 60) * 1000 },
        });
      }
      let hush = false;
      if (skipping) {
        try {
          hush = value.sampleRate === rate && isSilent(value);
        } catch (err) {
          skipping = false; // this browser cannot read the samples: every frame is encoded
          report(track.id, err);
        }
      }
      const n = value.numberOfFrames;
      if (hush && silent) {
        skipped += n;
        if (skipped * 1000 >= rate * SILENCE_REPORT_MS) reportSilence();
        value.close();
        continue;
      }
      if (!hush) {
        quiet = 0;
        if (silent) {
          reportSilence();
          setSilent(false);
        }
      } else quiet += n;
      if (encoder.state === "configured") {
        encoder.encode(value);
        fed += n;
      }
      value.close();
      if (hush && quiet * 1000 >= rate * SILENCE_HOLD_MS && fed % frameSamples === 0 && encoder.state === "configured") {
        setSilent(true);
        const flushed = encoder.flush().catch(() => {});
        drained = drained.then(() => flushed);
      }
    }
    reportSilence();
    await drained;
    if (encoder && encoder.state === "configured") await encoder.flush();
  } finally {
    if (encoder && encoder.state !== "closed") encoder.close();
    send(frame(3, track.id, 1, 0, new Uint8Array(0)));
  }
}

function capturePcm(track) {
  const context = new AudioContext();
  const source = context.createMediaStreamSource(new MediaStream([track]));
  const processor = context.createScriptProcessor(4096, 1, 1);
  processor.onaudioprocess = (event) => {
    const input = event.inputBuffer.getChannelData(0);
    const pcm = new Int16Array(input.length);
    for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]));
      pcm[i] = s < 0 ? s * 32768 : s * 32767;
    }
    send(frame(2, track.id, 1, context.sampleRate, new Uint8Array(pcm.buffer)));
  };
  source.connect(processor);
  // A ScriptProcessor only runs while connected to the destination; it writes nothing, so it is silent.
  processor.connect(context.destination);
  context.resume().catch(() => {});
  track.addEventListener("ended", () => {
    processor.disconnect();
    context.close().catch(() => {});
    send(frame(3, track.id, 1, 0, new Uint8Array(0)));
  }, { once: true });
}

function watchSources(track, receiver) {
  if (!receiver || typeof receiver.getSynchronizationSources !== "function") return;
  let sink = null;
  try {
    // Chromium updates a receiver's sources only while its audio is played out: a muted element does that.
    sink = new Audio();
    sink.muted = true;
    sink.srcObject = new MediaStream([track]);
    sink.play().catch(() => {});
  } catch {}
  // silent: set by the track's capture while its decoded audio is silent (no source on it is then worth a report).
  receivers.set(track.id, { track, receiver, seen: new Map(), sink, silent: false });
}

function activeSources(entry, list, kind, seen) {
  const out = [];
  for (const s of list) {
    const key = kind + s.source;
    seen.set(key, s.timestamp);
    if (entry.seen.get(key) === s.timestamp) continue; // nothing new from this source since the last report
    const level = typeof s.audioLevel === "number" ? Math.round(s.audioLevel * 10000) / 10000 : null;
    if (level !== null && level < SOURCE_MIN_LEVEL) continue;
    out.push([s.source, level]);
  }
  return out;
}

function reportSources() {
  if (!open) return; // stale reports are worthless: none are queued
  const out = [];
  for (const [trackId, entry] of receivers) {
    if (entry.track.readyState === "ended") {
      receivers.delete(trackId);
      if (entry.sink) entry.sink.srcObject = null;
      continue;
    }
    if (entry.silent) continue;
    const seen = new Map();
    let ssrc = [];
    let csrc = [];
    try {
      ssrc = activeSources(entry, entry.receiver.getSynchronizationSources(), "s", seen);
      if (typeof entry.receiver.getContributingSources === "function")
        csrc = activeSources(entry, entry.receiver.getContributingSources(), "c", seen);
    } catch {}
    entry.seen = seen;
    if (ssrc.length > 0 || csrc.length > 0) out.push({ trackId, ssrc, csrc });
  }
  if (out.length > 0 && ws.bufferedAmount < 4000000) ws.send(JSON.stringify({ type: "sources", tracks: out }));
}

// preferStream: tracks held back while the platform's mix is expected.
const held = [];
let preferredSeen = false;
let heldTimer = null;
let capturingAll = false;

function onTrack(track, streams, receiver) {
  if (track.kind !== "audio" || tracks.has(track.id)) return;
  if (CFG.preferStream && !capturingAll) {
    const want = String(CFG.preferStream).toLowerCase();
    const ids = [track.id, ...streams.map((s) => s.id)];
    if (ids.some((id) => String(id).toLowerCase().includes(want))) {
      preferredSeen = true;
      return captureTrack(track, streams, receiver);
    }
    if (held.some((h) => h[0] === track)) return;
    held.push([track, streams, receiver]);
    sendText({ type: "capture-notice", trackId: track.id, message: "held: not the " + CFG.preferStream + " stream (" + ids.join(", ") + ")" });
    if (!heldTimer && !preferredSeen) {
      heldTimer = setTimeout(() => {
        if (preferredSeen) return;
        capturingAll = true;
        sendText({ type: "capture-notice", message: "no " + CFG.preferStream + " stream after " + (CFG.preferStreamGraceMs || 15000) + " ms: capturing every track (words may be doubled)" });
        for (const [t, s, r] of held.splice(0)) captureTrack(t, s, r);
      }, CFG.preferStreamGraceMs || 15000);
    }
    return;
  }
  captureTrack(track, streams, receiver);
}

function captureTrack(track, streams, receiver) {
  if (tracks.has(track.id)) return;
  tracks.set(track.id, track);
  watchSources(track, receiver);
  const opus = hasWebCodecs() && !CFG.forcePcm;
  sendText({ type: "track", trackId: track.id, streamIds: streams.map((s) => s.id), encoding: opus ? "opus" : "pcm16" });
  try {
    if (opus) captureOpus(track).catch((err) => report(track.id, err));
    else capturePcm(track);
  } catch (err) {
    report(track.id, err);
  }
}

// receiveVideo false: the bot's descriptions receive no video (recvonly -> inactive, sendrecv -> sendonly).
function refuseVideo(sdp) {
  let video = false;
  return sdp.split("\r\n").map((line) => {
    if (line.startsWith("m=")) video = line.startsWith("m=video");
    else if (video && line === "a=recvonly") return "a=inactive";
    else if (video && line === "a=sendrecv") return "a=sendonly";
    return line;
  }).join("\r\n");
}

if (NativePC) {
  class RTCPeerConnection extends NativePC {
    constructor(...args) {
      super(...args);
      this.addEventListener("track", (event) => onTrack(event.track, event.streams || [], event.receiver));
    }
    async setLocalDescription(description) {
      if (CFG.receiveVideo !== false) return description === undefined ? super.setLocalDescription() : super.setLocalDescription(description);
      let d = description;
      // The implicit form (no argument) is made explicit so its description can be edited.
      if (!d || !d.sdp) {
        const type = (d && d.type) || (this.signalingState === "have-remote-offer" || this.signalingState === "have-local-pranswer" ? "answer" : "offer");
        if (type === "rollback") return super.setLocalDescription(d);
        d = type === "answer" ? await this.createAnswer() : await this.createOffer();
      }
      return super.setLocalDescription({ type: d.type, sdp: refuseVideo(d.sdp) });
    }
  }
  window.RTCPeerConnection = RTCPeerConnection;
  if (window.webkitRTCPeerConnection) window.webkitRTCPeerConnection = RTCPeerConnection;
}

// The bot's microphone: silent until the assistant speaks.
let mic = null;
function ensureMic() {
  if (mic) return mic;
  const context = new AudioContext({ sampleRate: 48000 });
  if (CFG.microphone === "silent") context.suspend().catch(() => {});
  const gain = context.createGain();
  gain.gain.value = 0;
  const destination = context.createMediaStreamDestination();
  gain.connect(destination);
  mic = { context, gain, destination, playhead: 0, sources: new Set() };
  return mic;
}

function playAssistant(buffer) {
  const m = ensureMic();
  if (m.context.state === "suspended") m.context.resume().catch(() => {});
  const view = new DataView(buffer);
  const channels = view.getUint8(1);
  const idLength = view.getUint16(2, true);
  const rate = view.getUint32(4, true);
  const pcm = new Int16Array(buffer.slice(8 + idLength));
  const frames = Math.floor(pcm.length / channels);
  if (frames === 0) return;
  const audio = m.context.createBuffer(1, frames, rate);
  const out = audio.getChannelData(0);
  for (let i = 0; i < frames; i++) out[i] = pcm[i * channels] / 32768;
  const node = m.context.createBufferSource();
  node.buffer = audio;
  node.connect(m.gain);
  const at = Math.max(m.playhead, m.context.currentTime + 0.05);
  node.start(at);
  m.playhead = at + audio.duration;
  m.sources.add(node);
  m.gain.gain.setValueAtTime(1, m.context.currentTime);
  node.onended = () => {
    m.sources.delete(node);
    if (m.sources.size === 0) m.gain.gain.setValueAtTime(0, m.context.currentTime);
  };
}

function clearAssistant() {
  if (!mic) return;
  for (const node of mic.sources) {
    try { node.stop(); } catch {}
  }
  mic.sources.clear();
  mic.playhead = 0;
  mic.gain.gain.setValueAtTime(0, mic.context.currentTime);
}

if (navigator.mediaDevices && navigator.mediaDevices.getUserMedia) {
  const nativeGetUserMedia = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    const out = [];
    if (constraints && constraints.audio) {
      const m = ensureMic();
      if (CFG.microphone !== "silent") m.context.resume().catch(() => {});
      out.push(m.destination.stream.getAudioTracks()[0].clone());
    }
    if (constraints && constraints.video && (CFG.camera === "card" || CFG.camera === "url")) {
      out.push(cardTrack());
    } else if (constraints && constraints.video && CFG.camera !== "off") {
      try {
        const video = await nativeGetUserMedia({ video: constraints.video });
        out.push(...video.getVideoTracks());
      } catch (err) {
        if (out.length === 0) throw err;
      }
    }
    return new MediaStream(out);
  };
}

// The bot's camera card: drawn a few times a second, sent through the page's own media (captureStream).
const card = { caption: "", canvas: null, stream: null, image: null };
// camera "url": the bot pushes the URL page's frames (JPEG, base64) here; the newest decoded one is drawn.
let framesDecoding = 0;
Object.defineProperty(window, "__talkgateCameraFrame", {
  value: (base64) => {
    if (CFG.camera !== "url" || typeof base64 !== "string" || framesDecoding > 1) return false;
    framesDecoding++;
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    createImageBitmap(new Blob([bytes], { type: "image/jpeg" }))
      .then((bitmap) => {
        if (card.image) card.image.close();
        card.image = bitmap;
        if (card.canvas) drawCard();
      })
      .catch(() => {})
      .finally(() => { framesDecoding--; });
    return true;
  },
});
const CARD_W = 320, CARD_H = 180;
function drawCard() {
  const g = card.canvas.getContext("2d");
  if (CFG.camera === "url") {
    // The URL page, as the bot's screencast of it last showed it (black until its first frame).
    if (card.image) g.drawImage(card.image, 0, 0, CARD_W, CARD_H);
    else { g.fillStyle = "#000000"; g.fillRect(0, 0, CARD_W, CARD_H); }
    return;
  }
  const speaking = !!(mic && mic.sources.size > 0);
  g.fillStyle = "#1b2a41";
  g.fillRect(0, 0, CARD_W, CARD_H);
  // Speaking: a large bright block (the other side sees it at a glance; tests measure it), else a dim ring.
  if (speaking) {
    g.fillStyle = "#3ddc84";
    g.fillRect(CARD_W - 110, 10, 100, 100);
  } else {
    g.strokeStyle = "#50607a";
    g.lineWidth = 4;
    g.strokeRect(CARD_W - 110, 10, 100, 100);
  }
  g.fillStyle = "#ffffff";
  g.font = "bold 22px sans-serif";
  g.fillText(String(CFG.botName || "Assistant").slice(0, 18), 12, 40);
  g.font = "14px sans-serif";
  g.fillText(speaking ? "speaking" : "listening", 12, 62);
  // The last caption, word-wrapped to three lines.
  const words = card.caption.split(/\s+/);
  let line = "", y = 130, lines = 0;
  for (const w of words) {
    const next = line ? line + " " + w : w;
    if (g.measureText(next).width > CARD_W - 24 && line) {
      g.fillText(line, 12, y); y += 18; line = w;
      if (++lines === 2) break;
    } else line = next;
  }
  if (line && lines < 3) g.fillText(line, 12, y);
}
function cardTrack() {
  if (!card.stream) {
    card.canvas = document.createElement("canvas");
    card.canvas.width = CARD_W;
    card.canvas.height = CARD_H;
    drawCard();
    const fps = Math.max(1, Math.min(30, CFG.cameraFps || 5));
    card.stream = card.canvas.captureStream(Math.max(fps, Math.min(60, CFG.cameraTrackFps || 0)));
    setInterval(drawCard, Math.round(1000 / fps));
  }
  return card.stream.getVideoTracks()[0].clone();
}

connect();
setInterval(reportSources, CFG.sourceIntervalMs || 200);
`;
