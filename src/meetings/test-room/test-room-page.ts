/**
 * The local test meeting's page: mesh WebRTC between participants on
 * loopback, signalled over `<page url>/ws`, laid out as a small meeting: a
 * grid of participant tiles (the own one first) that light up while their
 * participant speaks, a caption strip with the lines a bot in the room posts,
 * a chat panel and a control bar. Plain browser JavaScript in a string, so it
 * needs no bundler. Its DOM is the contract the test-room platform driver and
 * the tests read:
 *
 * - `body[data-state]`: `connecting` | `in_call` | `ended` | `left` | `disconnected`
 * - `#roster li[data-peer-id][data-name]` (the own entry has `data-self`)
 * - `.tile[data-peer-id][data-name] audio`: one tile per remote participant,
 *   whose `<audio>` plays that participant's stream (so a remote track maps to
 *   a name through its tile); the own tile is `.tile[data-self]`, with no audio
 * - `.tile[data-ssrcs]`: the SSRCs of that participant's audio, as its
 *   session description (received over signalling) announces them, space
 *   separated (so an RTP source maps to a name, as SFU platforms signal it)
 * - `.tile[data-speaking]`: the participant speaks now, as this page hears it
 *   (the level of its audio above 0.01 RMS, held 400 ms): the room's
 *   speaking indicator, and the active-speaker marks the driver reports
 * - `#captions li[data-speaker]`: captions a bot posted to the room
 *   (`showCaption(speaker, text)` on its page), newest last, the last three shown
 *
 * Query options, for tests of speaker attribution: `audio=detached` plays
 * remote audio outside the tiles, as SFU platforms do (tracks no longer map
 * to names, only RTP sources do); `ssrc=withhold` strips this participant's
 * `a=ssrc` lines from what it sends, so nobody can name its audio source.
 * For tests and benches whose pages nobody listens to or reads levels from:
 * `audio=off` plays no remote audio (a participant that speaks and never
 * listens: nothing pulls its remote tracks); `levels=off` runs no level
 * meters (each polls an analyser at 20 Hz and keeps an AudioContext
 * rendering: docs/performance.md, "Meetings"), so no level bars and no
 * speaking marks (ignored with `marks=on`, whose marks the meters make). On
 * such a page `peakLevel` and `speaking` throw rather than read silence.
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
 *   message shown, oldest first, `showCaption(speaker, text)`: posts a
 *   caption line to everyone in the room (false outside the call),
 *   `captions()`: `[{from, speaker, text, at}]` of every caption shown,
 *   `speaking()`: the names whose tiles are marked as speaking now).
 */
export function testRoomPage(room: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>talkgate test room ${escapeHtml(room)}</title>
<style>
${PAGE_STYLE}
</style>
</head>
<body data-state="connecting">
<header><h1>Test room <span id="room">${escapeHtml(room)}</span></h1><p id="status">Connecting…</p></header>
<main>
<section id="stage" aria-label="Participants">
<div id="tiles"></div>
<ol id="captions" aria-live="polite" aria-label="Captions"></ol>
</section>
<aside>
<section id="people" aria-label="People"><h2>People</h2><ul id="roster"></ul></section>
<section id="chat" aria-label="Chat">
<h2>Chat</h2>
<ol id="chat-log"></ol>
<form id="chat-form"><input id="chat-input" maxlength="2000" autocomplete="off" aria-label="Message" placeholder="Message everyone"><button id="chat-send" type="submit">Send</button></form>
</section>
</aside>
</main>
<footer id="controls"><button id="leave">Leave</button><button id="end-meeting" hidden>End meeting for everyone</button></footer>
<div id="audio-out"></div>
<script type="module">
${PAGE_SCRIPT}
</script>
</body>
</html>`;
}

/** A dark meeting layout: a tile grid that wraps on a phone-sized screen, the chat beside it (below it when narrow). */
const PAGE_STYLE = `
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0; background: #16181d; color: #e8eaed; display: flex; flex-direction: column; min-height: 100vh; }
header { display: flex; align-items: baseline; gap: 1rem; padding: .5rem 1rem; }
header h1 { font-size: 1.1rem; margin: 0; }
#status { margin: 0; color: #9aa0a6; font-size: .9rem; }
main { flex: 1; display: flex; gap: .75rem; padding: 0 1rem; flex-wrap: wrap; }
#stage { flex: 3 1 20rem; display: flex; flex-direction: column; gap: .5rem; }
#tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .5rem; }
.tile { position: relative; aspect-ratio: 16 / 9; background: #2a2d34; border-radius: .6rem; overflow: hidden; display: flex; align-items: center; justify-content: center; outline: 3px solid transparent; transition: outline-color .15s; }
.tile[data-speaking] { outline-color: #4caf50; }
.tile .avatar { width: 3.2rem; height: 3.2rem; border-radius: 50%; background: #5f6368; display: flex; align-items: center; justify-content: center; font-size: 1.3rem; font-weight: 600; }
.tile video { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: cover; }
.tile .name { position: absolute; left: .5rem; bottom: .4rem; background: rgba(0,0,0,.55); padding: .1rem .45rem; border-radius: .3rem; font-size: .85rem; z-index: 1; }
.tile .level { position: absolute; right: .5rem; bottom: .5rem; width: .6rem; height: 1.4rem; background: rgba(0,0,0,.4); border-radius: .3rem; overflow: hidden; z-index: 1; }
.tile .level i { position: absolute; left: 0; right: 0; bottom: 0; background: #4caf50; height: 0; }
#captions { list-style: none; margin: 0; padding: .5rem .75rem; background: rgba(0,0,0,.45); border-radius: .5rem; min-height: 3.5rem; }
#captions:empty::before { content: "Captions appear here when a bot in the room posts them."; color: #9aa0a6; font-size: .85rem; }
#captions li { margin: .1rem 0; }
#captions li:not(:nth-last-child(-n+3)) { display: none; }
#captions .speaker { font-weight: 600; margin-right: .4rem; color: #8ab4f8; }
aside { flex: 1 1 16rem; display: flex; flex-direction: column; gap: .5rem; min-width: 0; }
aside h2 { font-size: .95rem; margin: .25rem 0; }
#roster { list-style: none; padding: 0; margin: 0; }
#roster li { padding: .15rem 0; }
#chat { background: #202328; border-radius: .5rem; padding: .5rem; display: flex; flex-direction: column; }
#chat-log { list-style: none; padding: 0; margin: 0 0 .5rem; max-height: 18rem; overflow-y: auto; }
#chat-log .from { font-weight: bold; margin-right: .5rem; }
#chat-form { display: flex; gap: .25rem; }
#chat-input { flex: 1; min-width: 0; background: #2a2d34; color: inherit; border: 1px solid #444; border-radius: .3rem; padding: .35rem; }
button { background: #3c4043; color: #e8eaed; border: 0; border-radius: 1rem; padding: .4rem .9rem; cursor: pointer; }
#controls { display: flex; justify-content: center; gap: .5rem; padding: .75rem; }
#leave, #end-meeting { background: #d93025; }
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PAGE_SCRIPT = String.raw`
const params = new URLSearchParams(location.search);
const myName = (params.get("name") || "guest").slice(0, 64);
const detachedAudio = params.get("audio") === "detached";
const playsAudio = params.get("audio") !== "off";
const withholdSsrc = params.get("ssrc") === "withhold";
const sendVideo = params.get("video") === "on";
const levelsOff = params.get("levels") === "off" && params.get("marks") !== "on";
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

// A tile: initials, name, a level bar; video and (mesh) audio go in later.
function makeTile(id, name, self) {
  const tile = document.createElement("div");
  tile.className = "tile";
  tile.dataset.peerId = id;
  tile.dataset.name = name;
  if (self) tile.dataset.self = "";
  const avatar = document.createElement("span");
  avatar.className = "avatar";
  avatar.textContent = name.split(/\s+/).map((w) => w.charAt(0)).join("").slice(0, 2).toUpperCase();
  const label = document.createElement("span");
  label.className = "name";
  label.textContent = self ? name + " (you)" : name;
  const level = document.createElement("span");
  level.className = "level";
  level.append(document.createElement("i"));
  tile.append(avatar, label, level);
  return tile;
}

const SPEAKING_RMS = 0.01;
const SPEAKING_HOLD_MS = 400;

// Measures what this page hears from a peer (tests check that the bot's voice arrives) and drives its
// tile's level bar and speaking mark. Answers a stop function.
function watchLevel(name, stream, tile) {
  if (levelsOff) return () => {};
  try {
    audioContext = audioContext || new AudioContext();
    const analyser = audioContext.createAnalyser();
    analyser.fftSize = 2048;
    audioContext.createMediaStreamSource(stream).connect(analyser);
    const buf = new Float32Array(analyser.fftSize);
    const bar = tile && tile.querySelector(".level i");
    let lastLoud = 0;
    const tick = () => {
      analyser.getFloatTimeDomainData(buf);
      let sum = 0;
      for (const v of buf) sum += v * v;
      const rms = Math.sqrt(sum / buf.length);
      if (tile && !tile.dataset.self && rms > (peaks.get(name) || 0)) peaks.set(name, rms);
      if (!tile) return;
      const now = performance.now();
      if (rms >= SPEAKING_RMS) lastLoud = now;
      const speaking = now - lastLoud < SPEAKING_HOLD_MS;
      if (speaking !== ("speaking" in tile.dataset)) {
        if (speaking) tile.dataset.speaking = ""; else delete tile.dataset.speaking;
      }
      if (bar) bar.style.height = Math.min(100, Math.round(rms * 400)) + "%";
    };
    const timer = setInterval(tick, 50);
    return () => clearInterval(timer);
  } catch (err) {
    console.warn("level meter unavailable", err);
    return () => {};
  }
}

function showSelf() {
  if (document.querySelector(".tile[data-self]")) return;
  const tile = makeTile(me, myName, true);
  document.getElementById("tiles").prepend(tile);
  if (local && local.getAudioTracks().length) tile.stopLevel = watchLevel(myName, new MediaStream(local.getAudioTracks()), tile);
}

function addPeer(id, name, initiator) {
  const pc = new RTCPeerConnection();
  const tile = makeTile(id, name, false);
  const audio = document.createElement("audio");
  audio.autoplay = true;
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
      video.srcObject = new MediaStream([e.track]);
      video.play().catch(() => {});
      tile.append(video);
      return;
    }
    // audio=off: nobody listens here, so nothing pulls (decodes) the track.
    if (!playsAudio) return;
    const stream = e.streams[0] || new MediaStream([e.track]);
    audio.srcObject = stream;
    audio.play().catch(() => {});
    if (tile.stopLevel) tile.stopLevel();
    tile.stopLevel = watchLevel(name, stream, tile);
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
  if (peer.tile.stopLevel) peer.tile.stopLevel();
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
  const self = document.querySelector(".tile[data-self]");
  if (self && self.stopLevel) self.stopLevel();
  if (self) delete self.dataset.speaking;
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
  const tile = [...document.querySelectorAll(".tile:not([data-self])")].find((t) => t.dataset.name === name);
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

const captionLines = [];

function showCaption(m) {
  if (typeof m.from !== "string" || typeof m.speaker !== "string" || typeof m.text !== "string") return;
  captionLines.push({ from: m.from, speaker: m.speaker, text: m.text, at: m.at });
  const li = document.createElement("li");
  li.dataset.speaker = m.speaker;
  li.title = "captioned by " + m.from;
  const who = document.createElement("span");
  who.className = "speaker";
  who.textContent = m.speaker;
  const text = document.createElement("span");
  text.textContent = m.text;
  li.append(who, text);
  const list = document.getElementById("captions");
  list.append(li);
  // The strip shows the newest three (CSS); the page keeps a bounded history.
  while (list.children.length > 50) list.firstElementChild.remove();
}

// A bot posts its captions to everyone in the room (the room relays them like chat, marked as captions).
function postCaption(speaker, text) {
  const t = String(text == null ? "" : text).trim();
  if (t === "" || document.body.dataset.state !== "in_call" || !ws || ws.readyState !== WebSocket.OPEN) return false;
  send({ type: "caption", speaker: String(speaker == null ? "" : speaker).slice(0, 64) || "unknown", text: t });
  return true;
}

window.testRoom = {
  leave,
  end,
  peakLevel: (name) => {
    if (levelsOff) throw new Error("this page has no level meters (levels=off)");
    if (!playsAudio) throw new Error("this page plays no remote audio (audio=off)");
    return peaks.get(name) || 0;
  },
  videoLevel,
  sendChat,
  chatLog: () => chatMessages.map((m) => ({ ...m })),
  showCaption: postCaption,
  captions: () => captionLines.map((m) => ({ ...m })),
  speaking: () => {
    if (levelsOff) throw new Error("this page has no level meters (levels=off)");
    if (!playsAudio) throw new Error("this page plays no remote audio (audio=off)");
    return [...document.querySelectorAll(".tile[data-speaking]:not([data-self])")].map((t) => t.dataset.name);
  },
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
    showSelf();
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
  } else if (m.type === "caption") {
    showCaption(m);
  } else if (m.type === "ended") {
    closeAll("ended", "The meeting has ended (ended by " + m.by + ").");
  }
};
ws.onclose = () => {
  const s = document.body.dataset.state;
  if (s === "in_call" || s === "connecting") closeAll("disconnected", "Disconnected from the meeting.");
};
`;
