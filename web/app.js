/**
 * The talk page: the reference browser client of the Talk API (docs/api.md,
 * docs/web-page.md). Microphone in through an AudioWorklet at the session's
 * input format, assistant audio out through Web Audio, one Gateway-owned
 * session per start, its state shown only from talk.events. It speaks the
 * protocol only through the server's Talk client (src/client, served built
 * as lib/talk-client.js): requests, events, and the rejoin after a drop.
 */
import { SessionLink, TalkClient } from "./lib/talk-client.js";
import { Player } from "./player.js";
import { planSession } from "./session-plan.js";
import { SpeechDetector } from "./speech-detector.js";
import { Transcript } from "./transcript.js";

/** Audio per appendAudio request. */
const CHUNK_MS = 40;
/** Audio kept from before a speech onset is confirmed (conversation over stt-tts). */
const PRE_ROLL_CHUNKS = 10;
const TOKEN_KEY = "talkgate.token";

const $ = (id) => document.getElementById(id);
const ui = {
  start: $("start"),
  talk: $("talk"),
  orb: $("orb"),
  state: $("state"),
  detail: $("detail"),
  transcript: $("transcript"),
  latency: $("latency"),
  connection: $("connection"),
  token: $("token"),
  session: $("session"),
  modes: [...document.querySelectorAll(".modes [data-mode]")],
};

const LABELS = {
  idle: "Press Start and allow the microphone",
  connecting: "Connecting…",
  ready: "Hold the button or Space to talk",
  listening: "Listening",
  thinking: "Thinking…",
  speaking: "Speaking",
  closed: "Session ended",
  disconnected: "Disconnected",
};

/** Shown in this order, each with what it measures (latency.metrics from the Gateway, then the page's own). */
const LATENCY_LABELS = {
  turn_end_to_transcript: ["transcript", "End of your turn to your final transcript (server)"],
  turn_end_to_first_text: ["first words", "End of your turn to the answer's first words (server)"],
  turn_end_to_first_audio: ["answer", "End of your turn to the answer's first audio sent (server)"],
  heard: ["heard here", "End of your turn to the answer's first sound played by this page"],
};

const page = {
  mode: "conversation",
  running: false,
  busy: false,
  state: "idle",
  /** Every state shown, in order (what the browser tests read). */
  states: [],
  connection: "offline",
  /** @type {SessionLink | undefined} */
  live: undefined,
  /** The seq of every event delivered, in order (what the browser tests check for gaps and duplicates). */
  seqs: [],
  plan: undefined,
  audio: undefined,
  /** @type {Player | undefined} */
  player: undefined,
  detector: undefined,
  /** The user turn the page is streaming: {id?, pending[], open, after?}. */
  turn: undefined,
  preRoll: [],
  held: false,
  /** The assistant output in progress, from output.audio.* events. */
  output: undefined,
  /** Items whose remaining audio the page drops (stopped by local speech). */
  muted: new Set(),
  turnEndAt: new Map(),
  heardTurns: new Set(),
  latency: {},
  micLevel: -100,
  bargeIns: 0,
  sent: { chunks: 0, bytes: 0, refused: 0 },
  errors: [],
  events: [],
};
const transcript = new Transcript(ui.transcript);

// --- state, shown only from talk.events -------------------------------------------------------

function restingState() {
  return page.plan?.turns === "button" ? "ready" : "listening";
}

function setState(state) {
  page.state = state;
  if (page.states.at(-1) !== state) page.states.push(state);
  document.body.dataset.state = state;
  ui.state.textContent = LABELS[state] ?? state;
}

function setConnection(state) {
  page.connection = state;
  document.body.dataset.connection = state;
  ui.connection.textContent = state;
}

function detail(text) {
  ui.detail.textContent = text ?? "";
}

function fail(err) {
  const message = err?.message ?? String(err);
  page.errors.push({ code: err?.code, message });
  detail(message);
}

function onEvent(env) {
  page.events.push(env.type);
  page.seqs.push(env.seq);
  transcript.apply(env);
  switch (env.type) {
    case "session.ready":
      if (page.state === "connecting") setState(restingState());
      break;
    case "capture.started":
    case "input.audio.speech_started":
      if (page.state !== "speaking") setState("listening");
      break;
    case "input.audio.committed":
    case "input.audio.speech_stopped":
      if (env.turnId && !page.turnEndAt.has(env.turnId)) page.turnEndAt.set(env.turnId, performance.now());
      if (page.plan?.turns !== "stream") setState("thinking");
      break;
    case "turn.started":
      page.serverTurn = env.turnId;
      break;
    case "turn.ended":
      if (page.serverTurn === env.turnId) page.serverTurn = undefined;
      if (page.turn?.id === env.turnId) closeLocalTurn();
      break;
    case "output.audio.started":
    case "output.audio.delta":
      if (page.muted.has(env.itemId)) break;
      page.output = { turnId: env.turnId, itemId: env.itemId, done: false };
      setState("speaking");
      break;
    case "output.audio.done":
      if (page.output?.itemId === env.itemId) page.output.done = true;
      else if (page.state === "speaking") setState(restingState());
      break;
    case "output.audio.cancelled":
      stopPlayback();
      page.output = undefined;
      if (page.state === "speaking" || page.state === "thinking") setState(restingState());
      break;
    case "turn.cancelled":
      if (page.turn?.id === env.turnId) closeLocalTurn();
      if (page.output?.turnId === env.turnId) {
        stopPlayback();
        page.output = undefined;
      }
      if (page.state !== "listening" || page.plan?.turns === "button") setState(restingState());
      break;
    case "transcript.done":
      // Nothing heard: no answer will come.
      if (
        env.payload?.role === "user" &&
        !String(env.payload?.text ?? "").trim() &&
        page.state === "thinking"
      )
        setState(restingState());
      break;
    case "latency.metrics":
      page.latency[env.payload.name] = env.payload.ms;
      renderLatency();
      break;
    case "session.error":
      detail(env.payload?.message ?? "The session reported an error.");
      break;
    case "session.replaced":
      detail("This session continues in another window.");
      void stop("replaced");
      break;
    case "session.closed":
      if (!page.running) break;
      if (env.payload?.reason === "shutting_down") {
        // The server is stopping (Ctrl-C): it closed this session rather than wait for it.
        detail("The server is shutting down. Press Start when it is back.");
        void stop("disconnected");
      } else {
        detail(`Session closed (${env.payload?.reason ?? "closed"}).`);
        void stop("closed");
      }
      break;
  }
}

/** Speaking ends when the output is done and what was received has been played. */
function checkDrained() {
  if (page.state === "speaking" && page.output?.done && !page.player?.playing) {
    page.output = undefined;
    setState(restingState());
  }
}

// --- audio out --------------------------------------------------------------------------------

function onAudio(payload) {
  const { player } = page;
  if (!player || page.muted.has(payload.itemId) || payload.format?.encoding !== "pcm16") return;
  const pcm = pcm16FromBase64(payload.audioBase64);
  const startAt = player.enqueue(pcm, payload.format.sampleRate, payload.itemId);
  const endedAt = page.turnEndAt.get(payload.turnId);
  if (startAt !== undefined && endedAt !== undefined && !page.heardTurns.has(payload.turnId)) {
    page.heardTurns.add(payload.turnId);
    const delay = (startAt - player.context.currentTime) * 1000;
    page.latency.heard = Math.round(performance.now() - endedAt + delay);
    renderLatency();
  }
}

/** Stops playback now; the rest of the current item is dropped when it arrives. */
function stopPlayback() {
  const itemId = page.output?.itemId;
  if (itemId) page.muted.add(itemId);
  const stopped = page.player?.stop() ?? false;
  if (stopped && itemId) transcript.markInterrupted(itemId);
  return stopped;
}

/** The user talks over the assistant: silence it at once (the server hears of it through the turn verbs). */
function bargeIn() {
  if (!page.player?.playing && page.state !== "speaking") return;
  const output = page.output;
  const wasPlaying = page.player?.playing ?? false;
  stopPlayback();
  page.bargeIns += 1;
  page.lastBargeIn = { wasPlaying, playingAfter: page.player?.playing ?? false };
  // The state follows the server's events (turn.cancelled / output.audio.cancelled, capture.started).
  // Realtime: the provider also hears the speech; cancelOutput makes the server side certain.
  if (page.plan?.turns === "provider" && output) {
    reportPlayback();
    page.live?.verb("cancelOutput", { turnId: output.turnId, reason: "barge_in" }).catch(() => {});
  }
}

// --- audio in ---------------------------------------------------------------------------------

function onMic({ pcm, levels }) {
  if (!page.running) return;
  page.micLevel = levels.length ? Math.max(...levels) : page.micLevel;
  const speech = page.detector.process(levels);
  const turns = page.plan.turns;
  if (speech === "start" && turns !== "stream" && turns !== "button") bargeIn();
  if (turns === "provider" || turns === "stream") {
    send(pcm);
    // Captions: the end of an utterance finalizes its turn; the next frame starts the next one.
    if (speech === "end" && turns === "stream" && page.serverTurn) void endTurn({ id: page.serverTurn });
    return;
  }
  if (page.turn?.open) {
    if (page.turn.id) send(pcm);
    else page.turn.pending.push(pcm);
    // Conversation over stt-tts: the end of speech ends the turn (as a release would).
    if (speech === "end" && turns === "detector") finishTurn(false);
    return;
  }
  if (turns === "detector") {
    page.preRoll.push(pcm);
    if (page.preRoll.length > PRE_ROLL_CHUNKS) page.preRoll.shift();
    if (speech === "start" && page.connection === "connected") void beginTurn(page.preRoll.splice(0));
  }
}

/**
 * Tells the server what this page's speaker has played of the answer (the
 * player knows): the client sends it with the next appendAudio, and always
 * with startTurn / cancelOutput / cancelTurn, so a cut answer is truncated
 * where the user stopped hearing it.
 */
function reportPlayback() {
  const position = page.player?.position();
  if (position) page.live?.reportPlayback(position);
}

function send(pcm) {
  const live = page.live;
  if (!live?.connected) return;
  reportPlayback();
  page.sent.chunks += 1;
  page.sent.bytes += pcm.byteLength;
  live.verb("appendAudio", { audioBase64: base64FromPcm16(pcm) }).catch((err) => {
    page.sent.refused += 1;
    // The server ended the turn (its VAD) before this chunk: the turn is over here too.
    if (err.code === "no_active_turn" || err.code === "invalid_state") closeLocalTurn();
  });
}

/** startTurn, then the audio held meanwhile; a release before the answer is honoured after it. */
async function beginTurn(initial = []) {
  const turn = { id: undefined, pending: [...initial], open: true, after: undefined };
  page.turn = turn;
  reportPlayback();
  try {
    const { turnId } = await page.live.verb("startTurn");
    turn.id = turnId;
    if (turn.after === "cancel") {
      await page.live.verb("cancelTurn", { turnId, reason: "user_cancelled" }).catch(() => {});
      return;
    }
    for (const pcm of turn.pending.splice(0)) send(pcm);
    if (turn.after === "end") await endTurn(turn);
  } catch (err) {
    if (page.turn === turn) page.turn = undefined;
    fail(err);
  }
}

async function endTurn(turn) {
  try {
    await page.live.verb("endTurn", { turnId: turn.id });
  } catch (err) {
    // The server's VAD may have ended it first.
    if (err.code !== "stale_turn" && err.code !== "no_active_turn") fail(err);
  }
}

function closeLocalTurn() {
  if (page.turn) page.turn.open = false;
  page.turn = undefined;
}

// --- push to talk -----------------------------------------------------------------------------

function press() {
  if (!page.running || page.plan?.turns !== "button" || page.held) return;
  page.held = true;
  ui.talk.classList.add("held");
  if (page.player?.playing || page.state === "speaking") {
    const wasPlaying = page.player?.playing ?? false;
    stopPlayback();
    page.bargeIns += 1;
    page.lastBargeIn = { wasPlaying, playingAfter: page.player?.playing ?? false };
  }
  void beginTurn();
}

function release(cancel) {
  if (!page.held) return;
  page.held = false;
  ui.talk.classList.remove("held");
  finishTurn(cancel);
}

/** Ends (or cancels) the turn the page is streaming; before startTurn has answered, once it has. */
function finishTurn(cancel) {
  const turn = page.turn;
  if (!turn) return;
  closeLocalTurn();
  if (!turn.id) {
    turn.after = cancel ? "cancel" : "end";
    return;
  }
  if (cancel) page.live.verb("cancelTurn", { turnId: turn.id, reason: "user_cancelled" }).catch(() => {});
  else void endTurn(turn);
}

ui.talk.addEventListener("pointerdown", (e) => {
  e.preventDefault();
  // Touch pointers are captured by default; without capture, sliding off the button cancels.
  if (ui.talk.hasPointerCapture(e.pointerId)) ui.talk.releasePointerCapture(e.pointerId);
  press();
});
ui.talk.addEventListener("pointerup", () => release(false));
ui.talk.addEventListener("pointerleave", () => release(true));
ui.talk.addEventListener("pointercancel", () => release(true));
ui.talk.addEventListener("contextmenu", (e) => e.preventDefault());
window.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLInputElement) return;
  if (e.code === "Space") {
    e.preventDefault();
    if (!e.repeat) press();
  } else if (e.code === "Escape") release(true);
});
window.addEventListener("keyup", (e) => {
  if (e.code === "Space" && !(e.target instanceof HTMLInputElement)) release(false);
});

// --- start and stop ---------------------------------------------------------------------------

function talkUrl() {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/talk`;
}

async function start() {
  if (page.running || page.busy) return;
  page.busy = true;
  ui.start.disabled = true;
  setState("connecting");
  detail("");
  transcript.clear();
  page.latency = {};
  renderLatency();
  try {
    const context = new AudioContext({ latencyHint: "interactive" });
    page.audio = { context };
    await context.resume();
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
    });
    page.audio.stream = stream;
    const token = ui.token.value.trim() || undefined;
    const live = new SessionLink({
      connect: () => TalkClient.connect(talkUrl(), token ? { token } : {}),
      onEvent,
      onAudio,
      onState: onConnection,
    });
    page.live = live;
    page.seqs = [];
    try {
      await live.connect();
    } catch (err) {
      document.querySelector(".settings").open = true;
      throw new Error("The server refused the connection. Enter a token if it has auth.tokens.", {
        cause: err,
      });
    }
    const plan = planSession(page.mode, await live.request("talk.catalog", {}));
    page.plan = plan;
    page.player = new Player(context);
    page.detector = new SpeechDetector();
    await context.audioWorklet.addModule("capture-worklet.js");
    const created = await live.create(plan.params);
    ui.session.textContent = `${plan.label} · ${plan.inputFormat.sampleRate / 1000} kHz in · session ${created.sessionId}`;
    const node = new AudioWorkletNode(context, "talk-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      processorOptions: { targetRate: plan.inputFormat.sampleRate, chunkMs: CHUNK_MS },
    });
    node.port.onmessage = (message) => onMic(message.data);
    const silent = context.createGain();
    silent.gain.value = 0;
    context.createMediaStreamSource(stream).connect(node);
    node.connect(silent).connect(context.destination);
    page.audio.node = node;
    page.running = true;
    ui.talk.hidden = plan.turns !== "button";
    ui.start.textContent = "Stop";
    if (page.state === "connecting") setState(restingState());
  } catch (err) {
    fail(err);
    await teardown();
    setState("idle");
  } finally {
    page.busy = false;
    ui.start.disabled = false;
  }
}

async function stop(reason = "client_request") {
  if (!page.running && !page.live) return;
  page.running = false;
  await teardown(reason);
  setState(reason === "client_request" ? "idle" : reason === "disconnected" ? "disconnected" : "closed");
}

async function teardown() {
  const { live, audio, player } = page;
  page.live = undefined;
  page.turn = undefined;
  page.held = false;
  page.output = undefined;
  page.running = false;
  ui.talk.hidden = true;
  ui.start.textContent = "Start";
  player?.close();
  audio?.node?.port.postMessage("stop");
  audio?.node?.disconnect();
  for (const track of audio?.stream?.getTracks() ?? []) track.stop();
  await live?.close().catch(() => {});
  await audio?.context?.close().catch(() => {});
  setConnection("offline");
}

function onConnection(state, info) {
  setConnection(state === "connected" ? "connected" : state);
  if (state === "reconnecting") {
    // Nothing is heard or answered while the socket is gone: say so, not "Listening".
    if (page.running) setState("disconnected");
    detail(
      info?.code === 1001
        ? "The server is restarting: rejoining the session…"
        : "Connection lost: rejoining the session…",
    );
  } else if (state === "connected" && info?.rejoined) {
    if (page.state === "disconnected") setState(restingState());
    detail(info.complete ? "" : "Rejoined; some events were too old to replay.");
  } else if (state === "lost") {
    detail("Disconnected: the session could not be rejoined. Press Start for a new one.");
    void stop("disconnected");
  }
}

ui.start.addEventListener("click", () => void (page.running ? stop() : start()));

for (const button of ui.modes) {
  button.addEventListener("click", async () => {
    const mode = button.dataset.mode;
    if (mode === page.mode || page.busy) return;
    const wasRunning = page.running;
    if (wasRunning) await stop();
    page.mode = mode;
    document.body.dataset.mode = mode;
    for (const b of ui.modes) b.setAttribute("aria-checked", String(b === button));
    if (wasRunning) await start();
  });
}

// Token: from #token=... (never sent to the server as part of the URL) or remembered in this browser.
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
ui.token.value = fromHash ?? localStorage.getItem(TOKEN_KEY) ?? "";
if (fromHash) {
  localStorage.setItem(TOKEN_KEY, fromHash);
  history.replaceState(null, "", location.pathname + location.search);
}
ui.token.addEventListener("change", () => localStorage.setItem(TOKEN_KEY, ui.token.value.trim()));

// --- view -------------------------------------------------------------------------------------

function renderLatency() {
  const known = Object.keys(LATENCY_LABELS);
  const rank = (name) => (known.includes(name) ? known.indexOf(name) : known.length);
  const entries = Object.entries(page.latency).sort(([a], [b]) => rank(a) - rank(b));
  const rows = entries.map(([name, ms]) => {
    const [label, title] = LATENCY_LABELS[name] ?? [name.replaceAll("_", " "), name];
    const dt = document.createElement("dt");
    dt.textContent = label;
    const dd = document.createElement("dd");
    dd.textContent = ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
    const div = document.createElement("div");
    div.title = title;
    div.append(dt, dd);
    return div;
  });
  ui.latency.replaceChildren(...rows);
}

// The orb follows the voice at the display's frame rate, which costs a repaint each frame (software-drawn
// where there is no GPU: a third of the page's CPU in the browser tests, docs/web-page.md). With
// prefers-reduced-motion it holds still, and a frame that would draw the same level draws nothing.
const reducedMotion = matchMedia("(prefers-reduced-motion: reduce)");
let drawnLevel = "";
let animating = false;

function orbLevel() {
  const out = page.player?.level() ?? 0;
  const mic = Math.max(0, Math.min(1, (page.micLevel + 60) / 50));
  return page.state === "speaking" ? Math.min(1, out * 6) : page.running ? mic : 0;
}

function animate() {
  if (reducedMotion.matches) {
    animating = false;
    drawOrb("0");
    return;
  }
  drawOrb(orbLevel().toFixed(3));
  requestAnimationFrame(animate);
}

function drawOrb(level) {
  if (level === drawnLevel) return;
  drawnLevel = level;
  ui.orb.style.setProperty("--level", level);
}

function startAnimating() {
  if (animating) return;
  animating = true;
  requestAnimationFrame(animate);
}
reducedMotion.addEventListener("change", startAnimating);
startAnimating();
setInterval(checkDrained, 50);

// --- helpers ----------------------------------------------------------------------------------

function base64FromPcm16(pcm) {
  const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function pcm16FromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length - (binary.length % 2));
  for (let i = 0; i < bytes.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Int16Array(bytes.buffer);
}

// What the browser tests (and a curious developer) read; `drop()` simulates a network failure.
window.talkPage = {
  snapshot: () => ({
    mode: page.mode,
    state: page.state,
    states: [...page.states],
    label: ui.state.textContent,
    connection: page.connection,
    running: page.running,
    sessionId: page.live?.sessionId,
    plan: page.plan && { turns: page.plan.turns, params: page.plan.params },
    sampleRate: page.audio?.context?.sampleRate,
    transcript: transcript.snapshot(),
    player: page.player ? { ...page.player.stats, playing: page.player.playing } : undefined,
    session: page.live ? { ...page.live.stats, seqs: [...page.seqs], lastSeq: page.live.lastSeq } : undefined,
    latency: { ...page.latency },
    micSpeaking: page.detector?.speaking ?? false,
    orb: { level: drawnLevel, animating },
    bargeIns: page.bargeIns,
    lastBargeIn: page.lastBargeIn,
    sent: { ...page.sent },
    errors: [...page.errors],
    events: [...page.events],
  }),
  drop: () => page.live?.drop(),
};
