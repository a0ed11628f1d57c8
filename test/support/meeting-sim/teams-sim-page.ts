/**
 * Microsoft Teams on the web for an anonymous guest, simulated from the facts
 * of the open bots maintained against it (sources beside each; the table is
 * in docs/meetings.md, "Teams"). Pages:
 *
 * - meeting links: `/meet/<id>?p=<passcode>` (teams.live.com and
 *   teams.microsoft.com/meet; Meeting-BaaS teamsUrlParser.ts, attendee
 *   teams_ui_methods.py), `/l/meetup-join/19:meeting_<id>@thread.v2/0?context=`
 *   (the classic invite), `/light-meetings/launch?coords=<base64 JSON>`
 *   (Meeting-BaaS) and `/dl/launcher/launcher.html?url=` (Meeting-BaaS): the
 *   launcher, "Continue on this browser" (Vexa msteams/join.ts,
 *   Meeting-BaaS teams.ts; aria-label "Join meeting from this browser",
 *   screenapp), leading to `/v2/?meetingjoin=true#/l/meetup-join/…` (the form
 *   Meeting-BaaS rewrites every link to). With `signInRequired` the launcher
 *   sends the guest to a Microsoft sign-in page (`input[name="loginfmt"]`,
 *   attendee; Vexa msteams/auth-redirect.ts).
 * - the app at `/v2/`: an automated browser gets the captcha ("Verify you're a
 *   real person", attendee); else the pre-join: name
 *   `input[data-tid="prejoin-display-name-input"]` (attendee, screenapp;
 *   placeholder "Type your name", Meeting-BaaS), switches
 *   `[data-tid="toggle-mute"]` / `[data-tid="toggle-video"]` with
 *   `aria-checked` (attendee, screenapp), "Join now"
 *   `button[data-tid="prejoin-join-button"]` (attendee), enabled once a name
 *   was typed for real. With the microphone and camera both off, Join now
 *   first asks "Are you sure you don't want audio or video?" — "Continue
 *   without audio or video", after which Join now must be clicked again (Vexa
 *   msteams/modals.ts, Vexa#467). The lobby, "Someone in the meeting should
 *   let you in soon" (attendee, Meeting-BaaS), shows the hang-up button
 *   (Leave) as the call does. In the call: `#hangup-button` (attendee, Vexa),
 *   `#callingButtons-showMoreBtn` (attendee), `#raisehands-button` "Raise"
 *   (Meeting-BaaS: present only in the call), `#microphone-button` (Vexa) and
 *   Ctrl+Shift+M (Vexa), `#roster-button` "People" whose number counts
 *   everyone, the bot included, and which opens the people pane (a public
 *   Teams assistant script; the pane's `[data-tid="roster-participant"]` rows
 *   are Vexa's msteams-speakers.ts selectors); the stage in speaker view, a
 *   tile `[data-stream-type="Video"][data-tid="<name>"]` whose
 *   `[data-tid="voice-level-stream-outline"]` carries `vdi-frame-occlusion`
 *   while that person speaks (Meeting-BaaS observeSpeakers/teams.ts; Vexa
 *   msteams-speakers.ts), lagging the audio; one right-hand pane at a time
 *   (chat or people); chat bubbles over the stage while the chat is closed; an
 *   optional recording consent dialog after which the microphone can be
 *   unmuted (unmuting fails until the guest agrees: Azure
 *   communication-ui-library#5068, Teams' ExplicitRecordingConsent policy).
 *   The end screens replace the call's controls: "You’ve been removed from this
 *   meeting" (typographic apostrophe, Vexa msteams/selectors.ts), "Sorry, but
 *   you were denied access to the meeting." (attendee, Meeting-BaaS), "Meeting
 *   ended" (Vexa).
 */
import { escapeHtml, SIM_CLIENT_LIB } from "./sim-client-lib.js";
import type { SimMeetingState, SimRoute } from "./sim-server.js";

/** The meeting id inside any Teams link form this simulator serves. */
function meetingOf(url: URL): string | undefined {
  const direct = /^\/meet\/(\d{6,20})\/?$/.exec(url.pathname)?.[1];
  if (direct) return direct;
  const thread = (s: string): string | undefined => /meeting_(\d{6,20})@thread/.exec(s)?.[1];
  if (url.pathname.startsWith("/l/meetup-join/")) return thread(decodeURIComponent(url.pathname));
  if (url.pathname === "/dl/launcher/launcher.html")
    return thread(decodeURIComponent(url.searchParams.get("url") ?? ""));
  if (url.pathname === "/light-meetings/launch") {
    try {
      const coords = JSON.parse(decodeURIComponent(atob(url.searchParams.get("coords") ?? ""))) as {
        conversationId?: string;
      };
      return thread(String(coords.conversationId ?? ""));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export const teamsSimRoute: SimRoute = (url, meetings) => {
  if (url.pathname === "/common/oauth2/v2.0/authorize")
    return {
      html: page(
        "Sign in to your account",
        `<div class="login"><h1>Sign in</h1><input type="email" name="loginfmt" placeholder="Email, phone, or Skype"><input type="submit" value="Next"></div>`,
      ),
    };
  if (url.pathname === "/v2/" || url.pathname === "/v2")
    return { html: page("Microsoft Teams", `<div id="app"></div>`, APP) };
  if (url.pathname === "/post-call")
    return { html: page("Microsoft Teams", `<div><h2>You left the meeting</h2></div>`) };
  const id = meetingOf(url);
  if (!id) return null;
  const meeting: SimMeetingState | undefined = meetings.get(id);
  if (!meeting || meeting.platform !== "teams")
    return {
      html: page(
        "Microsoft Teams",
        `<p>Looks like the meeting URL is incorrect. Please check the URL and try again.</p>`,
      ),
    };
  if (meeting.options.signInRequired)
    return {
      redirect: `/common/oauth2/v2.0/authorize?client_id=sim&redirect_uri=${encodeURIComponent(url.href)}`,
    };
  const app = `/v2/?meetingjoin=true#/l/meetup-join/${encodeURIComponent(`19:meeting_${id}@thread.v2`)}/0?context=${encodeURIComponent('{"Tid":"sim"}')}&anon=true`;
  return {
    html: page(
      "Join conversation",
      `<div class="launcher"><h2>How do you want to join your Teams meeting?</h2>
<button id="open-app">Join on the Teams app</button>
<button id="continue" aria-label="Join meeting from this browser">Continue on this browser</button></div>
<script>
document.getElementById("continue").addEventListener("click", (e) => { if (e.isTrusted) location.assign(${JSON.stringify(app)}); });
</script>`,
    ),
  };
};

function page(title: string, body: string, app?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body { font-family: sans-serif; margin: 0; background: #f5f5f5; }
button { margin: 4px; }
[role=dialog] { position: fixed; top: 20%; left: 20%; width: 60%; background: #fff; border: 1px solid #888; padding: 1em; z-index: 50; }
#right-pane { position: fixed; right: 0; top: 0; width: 30%; background: #fff; }
[data-tid="chat-bubble"] { position: fixed; bottom: 60px; left: 10px; background: #ddd; padding: .5em; }
</style></head>
<body>${body}
${app ? `<script>window.SIM_MEETING = (/meeting_(\\d+)%40thread|meeting_(\\d+)@thread/.exec(decodeURIComponent(location.hash)) || []).slice(1).find(Boolean) || "";</script><script>${SIM_CLIENT_LIB}</script><script>${app}</script>` : ""}
</body></html>`;
}

const APP = String.raw`
(() => {
  const { send, on, guard, automated } = window.sim;
  const app = document.getElementById("app");
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const el = (html) => { const t = document.createElement("template"); t.innerHTML = html.trim(); return t.content.firstElementChild; };
  const state = {
    phase: "prejoin", participants: [], consent: false, consentGiven: false, typedName: "", botName: "",
    mic: true, camera: true, confirmedNoMedia: false, pane: "", speaking: [], lastSpeaker: "", chat: [],
  };

  function renderCaptcha() {
    app.replaceChildren(el('<div class="captcha"><h2>Verify you\'re a real person</h2><p>Select all images with traffic lights.</p><div class="challenge"></div></div>'));
    send({ t: "refused", why: "automation", webdriver: navigator.webdriver === true, ua: navigator.userAgent });
  }

  // --- pre-join -------------------------------------------------------------------------
  function renderPrejoin() {
    app.replaceChildren(el('<div data-tid="prejoin-screen"><h2>Choose your video and audio options</h2>' +
      '<input data-tid="prejoin-display-name-input" type="text" placeholder="Type your name" aria-label="Type your name">' +
      '<label><input type="checkbox" role="switch" data-tid="toggle-video" title="Turn camera off" aria-checked="true" checked> Camera</label>' +
      '<label><input type="checkbox" role="switch" data-tid="toggle-mute" title="Mute mic" aria-checked="true" checked> Microphone</label>' +
      '<button data-tid="prejoin-join-button" disabled>Join now</button></div>'));
    const name = app.querySelector('[data-tid="prejoin-display-name-input"]');
    const join = app.querySelector('[data-tid="prejoin-join-button"]');
    const cam = app.querySelector('[data-tid="toggle-video"]');
    const mic = app.querySelector('[data-tid="toggle-mute"]');
    name.addEventListener("input", (e) => {
      send({ t: "act", what: "Type your name", type: "input", trusted: e.isTrusted });
      if (e.isTrusted) state.typedName = name.value.trim();
      join.disabled = !(state.typedName !== "" && name.value.trim() === state.typedName);
    });
    const showSwitches = () => {
      cam.checked = state.camera; cam.setAttribute("aria-checked", String(state.camera)); cam.title = state.camera ? "Turn camera off" : "Turn camera on";
      mic.checked = state.mic; mic.setAttribute("aria-checked", String(state.mic)); mic.title = state.mic ? "Mute mic" : "Unmute mic";
    };
    guard(cam, "click", () => { state.camera = !state.camera; queueMicrotask(showSwitches); }, "camera switch");
    guard(mic, "click", () => { state.mic = !state.mic; queueMicrotask(showSwitches); }, "microphone switch");
    guard(join, "click", () => {
      if (join.disabled) return;
      if (!state.mic && !state.camera && !state.confirmedNoMedia) return confirmNoMedia();
      send({ t: "join", name: state.typedName, mic: state.mic, video: state.camera });
    }, "Join now");
    window.sim.acquireMic();
  }

  function confirmNoMedia() {
    // Light meetings ask after "Join now" with both devices off; "Join now" stays behind the dialog (Vexa#467).
    if (document.querySelector(".av-confirm")) return;
    const d = el('<div class="av-confirm" role="dialog"><h3>Are you sure you don\'t want audio or video?</h3>' +
      '<p>If you change your mind, select the camera icon by your address bar and then Always allow.</p>' +
      '<button>Continue without audio or video</button> <button aria-label="Close">X</button></div>');
    document.body.append(d);
    const [go, close] = d.querySelectorAll("button");
    guard(go, "click", () => { state.confirmedNoMedia = true; d.remove(); });
    guard(close, "click", () => d.remove());
  }

  // --- lobby ----------------------------------------------------------------------------
  function renderLobby() {
    app.replaceChildren(el('<div data-tid="lobby-screen"><h2>Someone in the meeting should let you in soon</h2>' +
      '<div role="toolbar" aria-label="Meeting controls"><button id="microphone-button" aria-label="Unmute mic">Mic</button>' +
      '<button id="hangup-button" aria-label="Leave">Leave</button></div></div>'));
    guard(app.querySelector("#hangup-button"), "click", leaveNow);
  }

  // --- the call -------------------------------------------------------------------------
  function renderCall() {
    app.replaceChildren(el('<div data-tid="app-layout-area--main"><div id="calling-unified-bar" role="toolbar" aria-label="Meeting controls">' +
      '<button id="chat-button" aria-label="Chat">Chat</button>' +
      '<button id="roster-button" aria-label="People"><span>People</span> <span class="roster-count"></span></button>' +
      '<button id="raisehands-button" aria-label="Raise">Raise</button>' +
      '<button id="reaction-menu-button" aria-label="React">React</button>' +
      '<button id="callingButtons-showMoreBtn" aria-label="More">More</button>' +
      '<button id="video-button" aria-label="Turn camera on">Camera</button>' +
      '<button id="microphone-button"></button>' +
      '<button id="hangup-button" aria-label="Leave">Leave</button></div>' +
      '<div data-tid="calling-stage" class="stage"></div><div id="right-pane"></div></div>'));
    guard(app.querySelector("#chat-button"), "click", () => { state.pane = state.pane === "chat" ? "" : "chat"; renderPane(); });
    guard(app.querySelector("#roster-button"), "click", () => { state.pane = state.pane === "people" ? "" : "people"; renderPane(); });
    guard(app.querySelector("#microphone-button"), "click", () => toggleMic());
    guard(app.querySelector("#hangup-button"), "click", leaveNow);
    guard(document, "keydown", (e) => { if (e.ctrlKey && e.shiftKey && (e.key === "M" || e.key === "m")) toggleMic(); }, "Ctrl+Shift+M");
    window.sim.setMic(state.joinMic);
    showMic();
    showCount();
    renderStage();
    if (state.consent) showConsent();
    window.sim.joinMedia();
  }

  function toggleMic() {
    if (!window.sim.media.micOn && state.consent && !state.consentGiven) {
      // With explicit recording consent, unmuting fails until the guest agrees.
      notice("You can't unmute until you agree to be recorded and transcribed.");
      return;
    }
    window.sim.setMic(!window.sim.media.micOn);
    showMic();
  }

  function showMic() {
    const b = app.querySelector("#microphone-button");
    if (!b) return;
    const on = window.sim.media.micOn;
    b.setAttribute("aria-label", on ? "Mute mic" : "Unmute mic");
    b.dataset.state = on ? "mic" : "mic-off";
    b.textContent = on ? "Mic on" : "Mic off";
  }

  function showCount() {
    const c = app.querySelector("#roster-button .roster-count");
    if (c) c.textContent = String(state.participants.length + 1);
  }

  function notice(text) {
    const n = el('<div role="status" class="notice">' + esc(text) + '</div>');
    app.append(n);
    setTimeout(() => n.remove(), 4000);
  }

  function showConsent() {
    if (document.querySelector(".recording-consent")) return;
    const d = el('<div class="recording-consent" role="dialog"><h3>This meeting is being recorded and transcribed</h3>' +
      '<p>By agreeing, you consent to being recorded. You can\'t unmute or share until you agree.</p><button>Agree</button></div>');
    document.body.append(d);
    guard(d.querySelector("button"), "click", () => { d.remove(); state.consentGiven = true; send({ t: "consent" }); });
  }

  function renderStage() {
    const stage = app.querySelector('[data-tid="calling-stage"]');
    if (!stage) return;
    // Speaker view: the people speaking now, else the last one who spoke; their outline lights while they speak.
    const names = state.speaking.length ? state.speaking : state.lastSpeaker ? [state.lastSpeaker] : [];
    stage.replaceChildren(...names.map((name) => el('<div data-stream-type="Video" data-tid="' + esc(name) + '" class="video-stream">' +
      '<div data-tid="voice-level-stream-outline" class="outline' + (state.speaking.includes(name) ? " vdi-frame-occlusion" : "") + '"></div>' +
      '<span class="tile-name">' + esc(name) + '</span></div>')));
  }

  function renderPane() {
    const pane = app.querySelector("#right-pane");
    if (!pane) return;
    // One pane at a time: opening the chat closes the people pane.
    if (state.pane === "people") {
      let p = pane.querySelector('[data-tid="people-pane"]');
      if (!p) { pane.replaceChildren(); p = el('<div data-tid="people-pane"><h3>People</h3><div role="tree" aria-label="Participants"></div></div>'); pane.append(p); }
      const tree = p.querySelector('[role="tree"]');
      const row = (name, you) => el('<div role="treeitem" data-tid="roster-participant" aria-label="' + esc(name) + (you ? ", (You)" : "") + '">' +
        '<span title="' + esc(name) + '">' + esc(name) + '</span>' + (you ? ' <span>(You)</span>' : "") + '</div>');
      tree.replaceChildren(el('<div class="section-title">In this meeting (' + (state.participants.length + 1) + ')</div>'),
        row(state.botName, true), ...state.participants.map((n) => row(n, false)));
    } else if (state.pane === "chat") {
      if (pane.querySelector('[data-tid="chat-pane"]')) return;
      pane.replaceChildren(el('<div data-tid="chat-pane"><div data-tid="message-pane-list-viewport"></div>' +
        '<div data-tid="ckeditor" role="textbox" contenteditable="true" aria-label="Type a message"></div>' +
        '<button data-tid="newMessageCommands-send" aria-label="Send">Send</button></div>'));
      for (const m of state.chat) appendChat(m);
      const box = pane.querySelector('[data-tid="ckeditor"]');
      const post = () => { const text = box.textContent.trim(); if (text) send({ t: "chat", text }); box.textContent = ""; };
      guard(pane.querySelector('[data-tid="newMessageCommands-send"]'), "click", post, "Send");
      guard(box, "keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); post(); } }, "message box");
    } else {
      pane.replaceChildren();
    }
  }

  function appendChat(m) {
    const list = app.querySelector('[data-tid="message-pane-list-viewport"]');
    if (!list) return;
    list.append(el('<div data-tid="chat-pane-message"><span data-tid="message-author-name">' + esc(m.from) + '</span> ' +
      '<time datetime="' + esc(m.at) + '">' + esc(new Date(m.at).toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" })) + '</time>' +
      '<div data-tid="chat-pane-message-body">' + esc(m.text) + '</div></div>'));
  }

  function endScreen(html) {
    window.sim.leaveMedia();
    // The call's controls and stage give way to the end screen.
    app.replaceChildren(el('<div data-tid="call-end-screen">' + html + '</div>'));
  }

  function leaveNow() {
    send({ t: "leave" });
    window.sim.leaveMedia();
    location.assign("/post-call");
  }

  on("state", (m) => {
    const before = state.phase;
    state.participants = m.participants;
    state.consent = m.consent || (state.consent && !m.consentGiven);
    state.consentGiven = m.consentGiven;
    if (m.phase === before) { showCount(); if (state.pane === "people") renderPane(); return; }
    if (before === "prejoin" && m.phase !== "prejoin") { state.botName = state.typedName; state.joinMic = state.mic; }
    state.phase = m.phase;
    if (m.phase === "waiting") renderLobby();
    else if (m.phase === "in_call") renderCall();
    else if (m.phase === "removed") endScreen("<h2>You’ve been removed from this meeting</h2><button>Rejoin</button> <button>Dismiss</button>");
    else if (m.phase === "denied") endScreen("<h2>Sorry, but you were denied access to the meeting.</h2><button data-tid=\"calling-retry-cancelbutton\">Dismiss</button>");
    else if (m.phase === "ended") endScreen("<h2>Meeting ended</h2><p>The organizer ended the meeting for everyone.</p>");
  });
  on("speaking", (m) => {
    state.speaking = m.names;
    if (m.names.length) state.lastSpeaker = m.names[m.names.length - 1];
    renderStage();
  });
  on("chat", (m) => {
    state.chat.push(m);
    if (state.phase !== "in_call") return;
    if (state.pane === "chat") appendChat(m);
    else {
      const b = el('<div data-tid="chat-bubble">' + esc(m.from) + ': ' + esc(m.text) + '</div>');
      app.append(b);
      setTimeout(() => b.remove(), 5000);
    }
  });

  if (!window.SIM_MEETING) { app.textContent = "Looks like the meeting URL is incorrect. Please check the URL and try again."; return; }
  if (automated()) { renderCaptcha(); window.sim.open(); return; }
  renderPrejoin();
  window.sim.open();
})();
`;
