/**
 * The simulated platform's media server, as a page the test opens in its own
 * Chromium: it plays the participants' recordings and sends them to the bot's
 * page over real WebRTC, the way each platform delivers meeting audio, and
 * measures the bot's microphone as the meeting hears it.
 *
 * - Zoom: one mixed stream for the whole meeting (Vexa's zoom-capture README:
 *   "Zoom mixes all participants into one audio stream"; the speaker comes
 *   from the active-speaker DOM).
 * - Teams: the whole meeting as ONE server-side mix whose stream id contains
 *   `mainAudio` (attendee's teams_chromedriver_payload.js keeps only tracks
 *   whose first stream id includes "mainAudio"; Vexa's teams-main-audio.ts:
 *   "track id prefixed mainAudio"), AND a redundant track per speaker "whose
 *   audio is already inside that mix" (Vexa) — capturing both doubles every word.
 *
 * The bot's microphone arrives on a receive-only transceiver; its level
 * (RMS, max over 50 ms windows) is reported to the simulator.
 */
export function simCorePage(meetingId: string, platform: "zoom" | "teams"): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>media core ${meetingId}</title></head>
<body><p>media core for ${platform} meeting ${meetingId}</p>
<script>
const MEETING = ${JSON.stringify(meetingId)};
const PLATFORM = ${JSON.stringify(platform)};
${CORE_SCRIPT}
</script></body></html>`;
}

const CORE_SCRIPT = String.raw`
const ws = new WebSocket("ws://" + location.host + "/sim/ws?role=core&meeting=" + MEETING);
const send = (m) => { if (ws.readyState === 1) ws.send(JSON.stringify(m)); };
const ctx = new AudioContext({ sampleRate: 48000 });
const mix = ctx.createMediaStreamDestination();
const people = new Map(); // name -> { gain, dest }
const buffers = new Map(); // url -> AudioBuffer
let pc = null;
let micMid = null;

function person(name) {
  let p = people.get(name);
  if (!p) {
    const gain = ctx.createGain();
    gain.connect(mix);
    const dest = ctx.createMediaStreamDestination();
    gain.connect(dest);
    p = { gain, dest };
    people.set(name, p);
  }
  return p;
}

function measure(track) {
  // Remote WebRTC audio reaches Web Audio only while a media element plays it (Chromium).
  const el = new Audio();
  el.muted = true;
  el.srcObject = new MediaStream([track]);
  el.play().catch(() => {});
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 2048;
  ctx.createMediaStreamSource(new MediaStream([track])).connect(analyser);
  const buf = new Float32Array(analyser.fftSize);
  let last = 0;
  setInterval(() => {
    analyser.getFloatTimeDomainData(buf);
    let sum = 0;
    for (const v of buf) sum += v * v;
    const rms = Math.sqrt(sum / buf.length);
    if (rms > 0.0005 || last > 0.0005) send({ t: "level", rms });
    last = rms;
  }, 50);
}

async function connect() {
  if (pc) pc.close();
  await ctx.resume();
  pc = new RTCPeerConnection();
  const mixTrack = mix.stream.getAudioTracks()[0];
  pc.addTrack(mixTrack, mix.stream);
  const redundant = [];
  if (PLATFORM === "teams") {
    for (const [, p] of people) {
      const t = p.dest.stream.getAudioTracks()[0];
      pc.addTrack(t, p.dest.stream);
      redundant.push(p.dest.stream.id);
    }
  }
  const mic = pc.addTransceiver("audio", { direction: "recvonly" });
  pc.ontrack = (e) => { if (e.transceiver === mic) measure(e.track); };
  pc.onicecandidate = (e) => { if (e.candidate) send({ t: "signal", data: { candidate: e.candidate.toJSON() } }); };
  pc.onconnectionstatechange = () => { if (pc.connectionState === "connected") send({ t: "connected" }); };
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  micMid = mic.mid;
  let sdp = pc.localDescription.sdp;
  if (PLATFORM === "teams") {
    // Teams names its server mix "mainAudio-<n>"; the redundant per-speaker streams carry other ids.
    const n = Math.floor(Math.random() * 90000) + 10000;
    sdp = sdp.split(mix.stream.id).join("mainAudio-" + n).split(mixTrack.id).join("mainAudio-" + n);
  }
  send({ t: "signal", data: { offer: { type: "offer", sdp }, micMid } });
}

async function onSignal(data) {
  if (!pc) return;
  if (data.answer) await pc.setRemoteDescription(data.answer);
  else if (data.candidate) await pc.addIceCandidate(data.candidate).catch(() => {});
}

async function play(id, name, url) {
  await ctx.resume();
  let buffer = buffers.get(url);
  if (!buffer) {
    buffer = await ctx.decodeAudioData(await (await fetch(url)).arrayBuffer());
    buffers.set(url, buffer);
  }
  const src = ctx.createBufferSource();
  src.buffer = buffer;
  src.connect(person(name).gain);
  send({ t: "speaking", name, on: true });
  src.onended = () => {
    send({ t: "speaking", name, on: false });
    send({ t: "played", id });
  };
  src.start();
}

ws.onmessage = (event) => {
  const m = JSON.parse(event.data);
  if (m.t === "participants") for (const name of m.names) person(name);
  else if (m.t === "connect") connect().catch((err) => console.error("connect failed", err));
  else if (m.t === "disconnect") { if (pc) pc.close(); pc = null; }
  else if (m.t === "signal") onSignal(m.data).catch((err) => console.error("signal failed", err));
  else if (m.t === "play") play(m.id, m.name, m.url).catch((err) => console.error("play failed", err));
};
window.simCore = { ready: () => ws.readyState === 1 };
`;
