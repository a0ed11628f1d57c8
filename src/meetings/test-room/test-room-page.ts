/**
 * The local test meeting's page: mesh WebRTC between participants on
 * loopback, signalled over `<page url>/ws`. Plain browser JavaScript in a
 * string, so it needs no bundler. Its DOM is the contract the test-room
 * platform driver reads:
 *
 * - `body[data-state]`: `connecting` | `in_call` | `ended` | `left` | `disconnected`
 * - `#roster li[data-peer-id][data-name]` (the own entry has `data-self`)
 * - `.tile[data-peer-id][data-name] audio`: one tile per remote participant,
 *   whose `<audio>` plays that participant's stream (so a remote track maps to
 *   a name through its tile)
 * - `.tile[data-ssrcs]`: the SSRCs of that participant's audio, as its
 *   session description (received over signalling) announces them, space
 *   separated (so an RTP source maps to a name, as SFU platforms signal it)
 *
 * Query options, for tests of speaker attribution: `audio=detached` plays
 * remote audio outside the tiles, as SFU platforms do (tracks no longer map
 * to names, only RTP sources do); `ssrc=withhold` strips this participant's
 * `a=ssrc` lines from what it sends, so nobody can name its audio source.
 * - `.tile video`: a participant's camera, when it sends one (`video=on` on
 *   its page asks for a camera); `videoLevel(name)` measures its latest frame
 * - `#chat`: the room's chat panel, `#chat-log li[data-from][data-at]` (every
 *   message the page has shown, its own included, as the room relayed it),
 *   `#chat-input` + `#chat-send` to post
 * - `#leave`, `#end-meeting` (host only) buttons; `window.testRoom` for tests
 *   (`leave()`, `end()`, `peakLevel(name)`: the loudest RMS heard from a peer,
 *   `videoLevel(name)`: mean luma 0-255 of the latest frame received from
 *   that participant's camera, 0 when none, `sendChat(text)`: posts as if typed in the panel (false when not in the
 *   call or the text is empty), `chatLog()`: `[{from, text, at}]` of every
 *   message shown, oldest first).
 */
export function testRoomPage(room: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>talkgate test room ${escapeHtml(room)}</title>
<style>
body { font-family: sans-serif; margin: 1rem; }
.tile { display: inline-block; border: 1px solid #999; padding: .5rem; margin: .25rem; }
#chat { border: 1px solid #999; padding: .5rem; margin-top: 1rem; max-width: 40rem; }
#chat-log { list-style: none; padding: 0; max-height: 20rem; overflow-y: auto; }
#chat-log .from { font-weight: bold; margin-right: .5rem; }
</style>
</head>
<body data-state="connecting">
<h1>Test room <span id="room">${escapeHtml(room)}</span></h1>
<p id="status">Connecting…</p>
<button id="leave">Leave</button>
<button id="end-meeting" hidden>End meeting for everyone</button>
<ul id="roster"></ul>
<div id="tiles"></div>
<div id="audio-out"></div>
<section id="chat" aria-label="Chat">
<ol id="chat-log"></ol>
<form id="chat-form"><input id="chat-input" maxlength="2000" autocomplete="off" aria-label="Message"><button id="chat-send" type="submit">Send</button></form>
</section>
<script type="module">
${PAGE_SCRIPT}
</script>
</body>
</html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PAGE_SCRIPT = String.raw`
const params = new URLSearchParams(location.search);
const myName = (params.get("name") || "guest").slice(0, 64);
const detachedAudio = params.get("audio") === "detached";
const withholdSsrc = params.get("ssrc") === "withhold";
const sendVideo = params.get("video") === "on";
const peers = new Map();
const peaks = new Map();
let me = null;
let ws = null;
let local = null;
let audioContext = null;

function setState(state, text) {
  document.body.dataset.state = state;
  document.getElementById("status").textContent = text;
}

function renderRoster() {
  const roster = document.getElementById("roster");
  roster.replaceChildren();
  const self = document.createElement("li");
  self.dataset.peerId = me;
  self.dataset.name = myName;
  self.dataset.self = "";
  self.textContent = myName + " (you)";
  roster.append(self);
  for (const [id, peer] of peers) {
    const li = document.createElement("li");
    li.dataset.peerId = id;
    li.dataset.name = peer.name;
    li.textContent = peer.name;
    roster.append(li);
  }
}

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
}

function watchLevel(name, stream) {
  // Measures what this page hears from a peer: tests check that the bot's voice arrives.
  try {
    audioContext = audioContext || new AudioContext();
    const analyser = audioContext.createAnalyser();
    analyser.fftSize = 2048;
    audioContext.createMediaStreamSource(stream).connect(analyser);
    const buf = new Float32Array(analyser.fftSize);
    const tick = () => {
      analyser.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      const rms = Math.sqrt(sum / buf.length);
      if (rms > (peaks.get(name) || 0)) peaks.set(name, rms);
    };
    setInterval(tick, 50);
  } catch (err) {
    console.warn("level meter unavailable", err);
  }
}

function addPeer(id, name, initiator) {
  const pc = new RTCPeerConnection();
  const tile = document.createElement("div");
  tile.className = "tile";
  tile.dataset.peerId = id;
  tile.dataset.name = name;
  const label = document.createElement("span");
  label.className = "name";
  label.textContent = name;
  const audio = document.createElement("audio");
  audio.autoplay = true;
  tile.append(label);
  if (detachedAudio) document.getElementById("audio-out").append(audio);
  else tile.append(audio);
  document.getElementById("tiles").append(tile);
  peers.set(id, { name, pc, tile, audio });
  for (const track of local.getTracks()) pc.addTrack(track, local);
  pc.onicecandidate = (e) => { if (e.candidate) send({ type: "signal", to: id, data: { candidate: e.candidate.toJSON() } }); };
  pc.ontrack = (e) => {
    if (e.track.kind === "video") {
      // A participant's camera: shown in its tile, measured by videoLevel(name).
      const video = document.createElement("video");
      video.muted = true;
      video.autoplay = true;
      video.playsInline = true;
      video.width = 160;
      video.srcObject = new MediaStream([e.track]);
      video.play().catch(() => {});
      tile.append(video);
      return;
    }
    const stream = e.streams[0] || new MediaStream([e.track]);
    audio.srcObject = stream;
    audio.play().catch(() => {});
    watchLevel(name, stream);
  };
  if (initiator) {
    pc.createOffer()
      .then((offer) => pc.setLocalDescription(offer))
      .then(() => send({ type: "signal", to: id, data: { sdp: outgoing(pc.localDescription) } }))
      .catch((err) => console.error("offer failed", err));
  }
  renderRoster();
}

function removePeer(id) {
  const peer = peers.get(id);
  if (!peer) return;
  peers.delete(id);
  peer.pc.close();
  peer.tile.remove();
  peer.audio.remove();
  renderRoster();
}

// The SSRCs a session description announces for its audio (a=ssrc lines of m=audio sections).
function audioSsrcs(sdp) {
  const out = new Set();
  let audio = false;
  for (const line of sdp.split(/\r?\n/)) {
    if (line.startsWith("m=")) audio = line.startsWith("m=audio");
    else if (audio) {
      const m = /^a=ssrc:(\d+)/.exec(line);
      if (m) out.add(m[1]);
    }
  }
  return [...out];
}

// What this participant sends: its description, without SSRC lines when it withholds them (media is demuxed by MID).
function outgoing(description) {
  const d = description.toJSON();
  if (withholdSsrc) d.sdp = d.sdp.split("\r\n").filter((l) => !l.startsWith("a=ssrc")).join("\r\n");
  return d;
}

async function onSignal(from, data) {
  const peer = peers.get(from);
  if (!peer) return;
  if (data.sdp) {
    await peer.pc.setRemoteDescription(data.sdp);
    const ssrcs = audioSsrcs(data.sdp.sdp || "");
    if (ssrcs.length > 0) peer.tile.dataset.ssrcs = ssrcs.join(" ");
    if (data.sdp.type === "offer") {
      await peer.pc.setLocalDescription(await peer.pc.createAnswer());
      send({ type: "signal", to: from, data: { sdp: outgoing(peer.pc.localDescription) } });
    }
  } else if (data.candidate) {
    await peer.pc.addIceCandidate(data.candidate);
  }
}

function closeAll(state, text) {
  for (const id of [...peers.keys()]) removePeer(id);
  if (local) for (const t of local.getTracks()) t.stop();
  setState(state, text);
}

function leave() {
  if (document.body.dataset.state !== "in_call" && document.body.dataset.state !== "connecting") return;
  closeAll("left", "You left the meeting.");
  if (ws) ws.close(1000, "left");
}

function end() {
  send({ type: "end" });
}

// Mean luma (0-255, BT.601) of the latest frame received from a participant's camera; 0 when none.
function videoLevel(name) {
  const tile = [...document.querySelectorAll(".tile")].find((t) => t.dataset.name === name);
  const video = tile && tile.querySelector("video");
  if (!video || video.readyState < 2 || !video.videoWidth) return 0;
  const canvas = document.createElement("canvas");
  canvas.width = 64;
  canvas.height = 36;
  const g = canvas.getContext("2d", { willReadFrequently: true });
  g.drawImage(video, 0, 0, canvas.width, canvas.height);
  const data = g.getImageData(0, 0, canvas.width, canvas.height).data;
  let sum = 0;
  for (let i = 0; i < data.length; i += 4) sum += 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
  return sum / (data.length / 4);
}

const chatMessages = [];

function showChat(m) {
  if (typeof m.from !== "string" || typeof m.text !== "string" || typeof m.at !== "string") return;
  chatMessages.push({ from: m.from, text: m.text, at: m.at });
  const li = document.createElement("li");
  li.dataset.from = m.from;
  li.dataset.at = m.at;
  const from = document.createElement("span");
  from.className = "from";
  from.textContent = m.from;
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = m.text;
  li.append(from, text);
  const log = document.getElementById("chat-log");
  log.append(li);
  log.scrollTop = log.scrollHeight;
}

function sendChat(text) {
  const t = String(text == null ? "" : text).trim();
  if (t === "" || document.body.dataset.state !== "in_call" || !ws || ws.readyState !== WebSocket.OPEN) return false;
  send({ type: "chat", text: t });
  return true;
}

window.testRoom = {
  leave,
  end,
  peakLevel: (name) => peaks.get(name) || 0,
  videoLevel,
  sendChat,
  chatLog: () => chatMessages.map((m) => ({ ...m })),
  get state() { return document.body.dataset.state; },
};
document.getElementById("leave").onclick = leave;
document.getElementById("end-meeting").onclick = end;
document.getElementById("chat-form").onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById("chat-input");
  if (sendChat(input.value)) input.value = "";
};

try {
  local = await navigator.mediaDevices.getUserMedia({ audio: true, video: sendVideo });
} catch (err) {
  local = new MediaStream();
  console.warn("no microphone", err);
}
const wsUrl = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname + "/ws?name=" + encodeURIComponent(myName);
// A bearer token in the fragment (never sent in a request line) authenticates the socket, as the Talk API's browsers do.
const token = new URLSearchParams(location.hash.slice(1)).get("token");
ws = token ? new WebSocket(wsUrl, ["talkgate", "bearer." + token]) : new WebSocket(wsUrl);
ws.onmessage = (event) => {
  const m = JSON.parse(event.data);
  if (m.type === "welcome") {
    me = m.id;
    document.getElementById("end-meeting").hidden = !m.host;
    for (const p of m.peers) addPeer(p.id, p.name, true);
    renderRoster();
    setState("in_call", "In the meeting as " + myName);
  } else if (m.type === "peer-joined") {
    addPeer(m.id, m.name, false);
  } else if (m.type === "peer-left") {
    removePeer(m.id);
  } else if (m.type === "signal") {
    onSignal(m.from, m.data).catch((err) => console.error("signal failed", err));
  } else if (m.type === "chat") {
    showChat(m);
  } else if (m.type === "ended") {
    closeAll("ended", "The meeting has ended (ended by " + m.by + ").");
  }
};
ws.onclose = () => {
  const s = document.body.dataset.state;
  if (s === "in_call" || s === "connecting") closeAll("disconnected", "Disconnected from the meeting.");
};
`;
