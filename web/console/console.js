/**
 * The operations console (docs/operations.md): signs in with an admin token
 * (typed, or `#token=...` in the fragment, never a query string), then reads
 * everything over the Talk API (`/talk`): `admin.workers.list`,
 * `admin.sessions.list`, `admin.errors.list`, `admin.usage.list` (polled),
 * and `admin.session.follow` for the selected session's live events. Acts
 * with `admin.session.close`, `admin.session.cancelOutput`,
 * `meetings.bots.delete` and `admin.worker.drain`. It speaks the protocol
 * only through the server's Talk client (src/client, served built as
 * /lib/talk-client.js).
 */
import { TalkClient } from "../lib/talk-client.js";
import { elapsed } from "./dom.js";
import { SessionDetail } from "./session-detail.js";
import {
  renderErrors,
  renderJoins,
  renderSessions,
  renderSummary,
  renderUsage,
  renderWorkers,
} from "./views.js";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "talkgate.console.token";
const POLL_MS = 1500;
/** Errors and usage change slowly: every this many polls. */
const SLOW_EVERY = 3;

const state = {
  token: "",
  socket: undefined,
  workers: [],
  sessions: [],
  errors: [],
  usage: [],
  joins: [],
  unreachable: [],
  selected: undefined,
  timer: undefined,
  polls: 0,
  actions: [],
};

const detail = new SessionDetail({
  root: $("detail-body"),
  empty: $("detail-empty"),
  title: $("detail-title"),
  facts: $("detail-facts"),
  actions: $("detail-actions"),
  transcript: $("transcript"),
  events: $("events"),
  latency: $("latency"),
  act: (verb, summary) => act(verb, summary),
});

function toast(message, kind = "info") {
  const el = $("toast");
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.hidden = true), 4000);
}

function setConnection(text) {
  document.body.dataset.connection = text;
  $("connection").textContent = text;
}

/** The token from `#token=...`, removed from the address bar at once. */
function tokenFromFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) history.replaceState(null, "", location.pathname);
  return token ?? undefined;
}

/**
 * Opens the socket with `token` and checks its admin scope. `reconnecting`:
 * the board stays up and a failure is retried until it works or the operator
 * signs out (a restarting server refuses connections for a while).
 */
async function signIn(token, reconnecting = false) {
  $("sign-in-error").textContent = "";
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/talk`;
  setConnection(reconnecting ? "reconnecting" : "connecting");
  let socket;
  try {
    socket = await TalkClient.connect(url, { token });
    // The admin scope is checked by a first call: a token without it is refused here.
    await socket.requestUntyped("admin.workers.list");
  } catch (err) {
    void socket?.close();
    if (reconnecting && state.token === token && err.code !== "forbidden") {
      setTimeout(() => {
        if (state.token === token && !state.socket) void signIn(token, true);
      }, 3000);
      return false;
    }
    if (reconnecting) signOut();
    setConnection("offline");
    const why =
      err.code === "forbidden" && err.details?.tokensConfigured === false
        ? "This server has no tokens configured, so no token has the admin scope. Start it with " +
          "TALKGATE_ADMIN_TOKEN=<a long secret> (or auth.tokens in its config) and sign in with that token."
        : err.code === "forbidden"
          ? "This token has no admin scope."
          : err.code === "provider_unavailable"
            ? "The server refused this token."
            : err.message;
    $("sign-in-error").textContent = why;
    sessionStorage.removeItem(TOKEN_KEY);
    return false;
  }
  state.token = token;
  state.socket = socket;
  socket.on("event", (name, payload) => onEvent({ event: name, payload }));
  socket.on("close", () => {
    if (state.socket === socket) onClose();
  });
  sessionStorage.setItem(TOKEN_KEY, token);
  document.body.dataset.auth = "signed-in";
  $("sign-in").hidden = true;
  $("board").hidden = false;
  $("sign-out").hidden = false;
  setConnection("live");
  state.polls = 0;
  await poll();
  if (state.selected) await follow(state.selected);
  return true;
}

function signOut() {
  clearTimeout(state.timer);
  const socket = state.socket;
  state.socket = undefined;
  void socket?.close();
  state.token = "";
  state.selected = undefined;
  detail.clear();
  sessionStorage.removeItem(TOKEN_KEY);
  document.body.dataset.auth = "signed-out";
  $("sign-in").hidden = false;
  $("board").hidden = true;
  $("sign-out").hidden = true;
  setConnection("offline");
}

function onClose() {
  clearTimeout(state.timer);
  state.socket = undefined;
  setConnection("reconnecting");
  // The server restarted or the network dropped: sign in again with the same token.
  setTimeout(() => {
    if (state.token && !state.socket) void signIn(state.token, true);
  }, 1500);
}

function onEvent(frame) {
  if (frame.event === "admin.session.event") {
    if (frame.payload.sessionId === state.selected) detail.apply(frame.payload.event);
  } else if (frame.event === "admin.follow.ended") {
    if (frame.payload.sessionId === state.selected) detail.ended(frame.payload.reason);
  }
}

async function poll() {
  clearTimeout(state.timer);
  const socket = state.socket;
  if (!socket) return;
  const slow = state.polls++ % SLOW_EVERY === 0;
  try {
    const [workers, sessions, errors, usage, joins] = await Promise.all([
      socket.requestUntyped("admin.workers.list"),
      socket.requestUntyped("admin.sessions.list"),
      slow ? socket.requestUntyped("admin.errors.list") : undefined,
      slow ? socket.requestUntyped("admin.usage.list") : undefined,
      slow ? socket.requestUntyped("admin.meetings.joins") : undefined,
    ]);
    state.workers = workers.workers;
    state.sessions = sessions.sessions;
    state.unreachable = sessions.unreachable;
    if (errors) state.errors = errors.errors;
    if (usage) state.usage = usage.records;
    if (joins) state.joins = joins.platforms;
    render();
  } catch (err) {
    if (err.code !== "cancelled") toast(`Refresh failed: ${err.message}`, "error");
  }
  if (state.socket === socket) state.timer = setTimeout(() => void poll(), POLL_MS);
}

function render() {
  renderSummary($("summary"), state);
  renderWorkers($("workers"), $("workers-count"), state.workers, (id) => act("drain", { workerId: id }));
  renderSessions($("sessions"), $("sessions-count"), $("sessions-empty"), state.sessions, {
    selected: state.selected,
    select: (id) => void follow(id),
    act: (verb, summary) => act(verb, summary),
  });
  renderErrors($("errors"), $("errors-count"), $("errors-empty"), state.errors, (id) => void follow(id));
  renderUsage($("usage"), $("usage-totals"), state.usage);
  renderJoins($("joins"), $("joins-empty"), state.joins);
  const summary = state.sessions.find((s) => s.sessionId === state.selected);
  if (summary) detail.update(summary);
}

async function follow(sessionId) {
  const socket = state.socket;
  if (!socket) return;
  const previous = state.selected;
  state.selected = sessionId;
  if (previous && previous !== sessionId)
    void socket.requestUntyped("admin.session.unfollow", { sessionId: previous }).catch(() => undefined);
  const summary = state.sessions.find((s) => s.sessionId === sessionId);
  detail.show(sessionId, summary);
  render();
  try {
    await socket.requestUntyped("admin.session.follow", { sessionId });
  } catch (err) {
    detail.ended(err.code === "session_not_found" ? "not live" : err.code);
  }
}

/** One operator action; its answer or error is shown as a toast and kept in `state.actions`. */
async function act(verb, target) {
  const socket = state.socket;
  if (!socket) return;
  const calls = {
    hangUp: ["admin.session.close", { sessionId: target.sessionId }, "Hung up"],
    cancelOutput: ["admin.session.cancelOutput", { sessionId: target.sessionId }, "Output cancelled"],
    removeBot: ["meetings.bots.delete", { botId: target.counterpart?.botId }, "Bot removed"],
    drain: ["admin.worker.drain", { workerId: target.workerId }, "Draining"],
  };
  const [method, params, done] = calls[verb];
  try {
    const result = await socket.requestUntyped(method, params);
    state.actions.push({ verb, ok: true, result });
    toast(`${done}: ${target.sessionId ?? target.workerId}`);
  } catch (err) {
    state.actions.push({ verb, ok: false, code: err.code });
    toast(`${method} failed: ${err.code}`, "error");
  }
  await poll();
}

async function downloadCsv(event) {
  event.preventDefault();
  const today = new Date().toISOString().slice(0, 10);
  const res = await fetch(`/admin/usage?from=${today}&to=${today}&format=csv`, {
    headers: { authorization: `Bearer ${state.token}` },
  });
  if (!res.ok) return toast(`Usage CSV: HTTP ${res.status}`, "error");
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await res.blob());
  link.download = `talkgate-usage-${today}.csv`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  if (token) void signIn(token);
});
$("sign-out").addEventListener("click", signOut);
$("usage-csv").addEventListener("click", (event) => void downloadCsv(event));
// Durations tick between polls.
setInterval(() => {
  for (const el of document.querySelectorAll("[data-since]")) {
    el.textContent = elapsed(Number(el.dataset.since));
  }
}, 1000);

/** Plain data for tests and debugging. */
window.talkgateConsole = {
  snapshot: () => ({
    signedIn: state.socket !== undefined,
    selected: state.selected,
    workers: state.workers,
    sessions: state.sessions,
    errors: state.errors,
    usage: state.usage,
    actions: state.actions,
    detail: detail.snapshot(),
  }),
};

// A link with `#token=` opened on a console already loaded (only the fragment changed).
window.addEventListener("hashchange", () => {
  const token = tokenFromFragment();
  if (!token) return;
  if (state.socket) signOut();
  void signIn(token);
});

const initial = tokenFromFragment() ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
if (initial) void signIn(initial);
