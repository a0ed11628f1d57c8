/**
 * Zoom's web client, simulated from the facts of the open bots maintained
 * against it (each fact's source beside it; the table is in docs/meetings.md,
 * "Zoom"). Pages:
 *
 * - `/j/<id>?pwd=` the invite landing: "Launch Meeting" and "Join from your
 *   browser" (screenapp ZoomBot.ts), which leads to `/wc/join/<id>`;
 * - `/wc/<id>/join` (the React client Vexa opens directly) and `/wc/join/<id>`
 *   (the classic client, screenapp): before the host starts the meeting, the
 *   static error page, title "Error - Zoom", "This meeting link is invalid
 *   (3,001)" (Vexa zoom/selectors.ts; Vexa reloads every 15 s for up to 10
 *   minutes); then the client app below;
 * - `/wc/leave` after leaving.
 *
 * The app: the OneTrust cookie banner over the pre-join card, intercepting
 * clicks until answered (Vexa zoom/join.ts: `#onetrust-accept-btn-handler`,
 * `#onetrust-reject-all-handler`); the media permission dialog, twice (camera
 * and microphone, then microphone; "Allow" or "Continue without microphone and
 * camera": without Allow, no audio at all — Vexa zoom/join.ts); the name
 * `#input-for-name` whose Join (`button.preview-join-button`) stays disabled
 * until a real keystroke typed the name (Vexa: a synthetic setter "doesn't
 * fully satisfy Zoom's React form validation — the Join button stays
 * disabled"); preview toggles `#preview-audio-control-button` ("Mute" = on)
 * and `#preview-video-control-button` ("Stop Video" = on) (Vexa); the bot wall
 * for an automated browser ("We detected you may be a bot. Automated bots
 * aren’t allowed to join …", a reCAPTCHA frame, "Sign in to join" — Vexa
 * zoomBotBlockTexts); the waiting room ("Please wait, the meeting host will
 * let you in soon." — Vexa), which renders inside `.meeting-app` (Vexa) and
 * here shows a Leave; in the call a footer (`#wc-footer`, screenapp) that
 * auto-hides (Vexa #966) with the audio control `.join-audio-container__btn`
 * (Vexa capture-bridge.ts), the participants button whose counter counts
 * everyone, the bot included (screenapp RecordingTask.ts; PreMiD's Zoom
 * presence `.footer-button__participants-icon > .footer-button__number-counter
 * > span`), Leave `button[aria-label="Leave"]` then "Leave Meeting"
 * `button.leave-meeting-options__btn--danger` (Vexa zoom/leave.ts); "Join
 * Audio by Computer" after admission (no audio until it is clicked); an
 * optional recording consent dialog ("This meeting is being recorded", "Got
 * it" / "Leave Meeting"; no audio until acknowledged — Vexa #515, #176); the
 * participants panel `.participants-section-container` only once opened; the
 * speaker view's active tile `.speaker-active-container__video-frame
 * .video-avatar__avatar-footer span` (Vexa zoom-speakers.ts), lagging the
 * audio; the chat panel and chat toasts; end and removal as `.zm-modal`
 * dialogs (`.zm-modal-body-title` "This meeting has been ended by host" —
 * Vexa; `[aria-label="Meeting is end now"]` — screenapp).
 */
import { escapeHtml, SIM_CLIENT_LIB } from "./sim-client-lib.js";
import type { SimRoute } from "./sim-server.js";

const WC_PATH = /^\/wc\/(?:(\d{6,20})\/join|join\/(\d{6,20}))\/?$/;

export const zoomSimRoute: SimRoute = (url, meetings) => {
  if (url.pathname === "/wc/leave")
    return { html: page("Zoom", `<div class="post-meeting"><h2>You have left the meeting</h2></div>`) };
  const landing = /^\/j\/(\d{6,20})\/?$/.exec(url.pathname);
  if (landing) {
    const meeting = meetings.get(landing[1]!);
    if (!meeting || meeting.platform !== "zoom") return null;
    const to = `/wc/join/${meeting.id}${url.search}`;
    return {
      html: page(
        "Launch Meeting - Zoom",
        `<div class="launch"><h3>Click Open Zoom Workplace on the dialog shown by your browser</h3>
<button class="launch-btn" id="launch">Launch Meeting</button>
<p>Having issues with Zoom Workplace? <a id="join-from-browser" href="${escapeHtml(to)}">Join from your browser</a></p></div>
<script>
// Only a real click follows the link (Zoom's landing is a React app, not a plain link).
document.getElementById("join-from-browser").addEventListener("click", (e) => { if (!e.isTrusted) e.preventDefault(); });
</script>`,
      ),
    };
  }
  const wc = WC_PATH.exec(url.pathname);
  if (!wc) return null;
  const meeting = meetings.get(wc[1] ?? wc[2]!);
  if (!meeting || meeting.platform !== "zoom")
    return {
      status: 200,
      html: page("Error - Zoom", `<div class="error"><h3>This meeting ID is not valid.</h3></div>`),
    };
  if (!meeting.hostStarted)
    return {
      html: page(
        "Error - Zoom",
        `<div class="error-page"><h3>This meeting link is invalid (3,001)</h3><p>Meeting has not started</p></div>`,
      ),
    };
  return { html: page("Zoom Meeting", `<div id="root"></div>`, meeting.id, APP) };
};

function page(title: string, body: string, meeting?: string, app?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body { font-family: sans-serif; margin: 0; background: #1a1a1a; color: #eee; }
button { margin: 4px; }
.zm-modal, .bot-wall { position: fixed; top: 20%; left: 20%; width: 60%; background: #333; padding: 1em; z-index: 50; }
#onetrust-consent-sdk { position: fixed; inset: 0; z-index: 100; background: rgba(0,0,0,.4); }
#onetrust-banner-sdk { position: absolute; bottom: 0; left: 0; right: 0; background: #fff; color: #000; padding: 1em; }
#wc-footer { position: fixed; bottom: 0; left: 0; right: 0; background: #222; transition: opacity .3s; }
#wc-footer.footer--hidden { opacity: 0; }
#wc-container-right { position: fixed; right: 0; top: 0; width: 30%; }
.chat-toast { position: fixed; bottom: 60px; right: 10px; background: #444; padding: .5em; }
</style></head>
<body>${body}
${meeting ? `<script>window.SIM_MEETING = ${JSON.stringify(meeting)};</script><script>${SIM_CLIENT_LIB}</script><script>${app}</script>` : ""}
</body></html>`;
}

const APP = String.raw`
(() => {
  const { send, on, guard, automated } = window.sim;
  const root = document.getElementById("root");
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
  const el = (html) => { const t = document.createElement("template"); t.innerHTML = html.trim(); return t.content.firstElementChild; };
  const state = {
    phase: "prejoin", participants: [], botName: "", consent: false, consentGiven: false,
    cookiesAnswered: false, permissionsAnswered: 0, audioPermitted: false,
    typedName: "", previewMic: true, previewVideo: true,
    audioJoined: false, consentAcked: false, speaker: "", chat: [], chatOpen: false, participantsOpen: false,
  };

  // --- pre-join ----------------------------------------------------------------------
  function renderPrejoin() {
    root.replaceChildren();
    const card = el('<div class="preview-meeting-info"><h2>Join Meeting</h2>' +
      '<label for="input-for-name">Your Name</label> <input id="input-for-name" type="text" placeholder="Your Name" aria-label="Your Name" autocomplete="off">' +
      '<div class="preview-controls"><button id="preview-audio-control-button" aria-label="Mute">Mute</button>' +
      '<button id="preview-video-control-button" aria-label="Stop Video">Stop Video</button></div>' +
      '<button class="zm-btn preview-join-button disabled" disabled>Join</button></div>');
    root.append(card);
    const name = card.querySelector("#input-for-name");
    const join = card.querySelector(".preview-join-button");
    const micBtn = card.querySelector("#preview-audio-control-button");
    const camBtn = card.querySelector("#preview-video-control-button");
    const setJoinEnabled = () => {
      const ok = state.typedName !== "" && name.value.trim() === state.typedName;
      join.disabled = !ok;
      join.classList.toggle("disabled", !ok);
    };
    // React validation runs on real input only: a value set by script leaves Join disabled.
    name.addEventListener("input", (e) => {
      send({ t: "act", what: "Your Name", type: "input", trusted: e.isTrusted });
      if (e.isTrusted) state.typedName = name.value.trim();
      setJoinEnabled();
    });
    const showDevices = () => {
      micBtn.setAttribute("aria-label", state.previewMic ? "Mute" : "Unmute");
      micBtn.textContent = state.previewMic ? "Mute" : "Unmute";
      camBtn.setAttribute("aria-label", state.previewVideo ? "Stop Video" : "Start Video");
      camBtn.textContent = state.previewVideo ? "Stop Video" : "Start Video";
    };
    guard(micBtn, "click", () => { state.previewMic = !state.previewMic; showDevices(); });
    guard(camBtn, "click", () => { state.previewVideo = !state.previewVideo; showDevices(); });
    guard(join, "click", () => {
      setJoinEnabled();
      if (join.disabled) return;
      if (automated() || state.botWall) return renderBotWall();
      send({ t: "join", name: state.typedName, mic: state.previewMic && state.audioPermitted, video: state.previewVideo });
    }, "Join");
    if (!state.cookiesAnswered) showCookieBanner();
    else if (state.permissionsAnswered < 2) showPermissionDialog();
    showDevices();
  }

  function showCookieBanner() {
    // OneTrust's banner covers the page and takes every click until answered (Vexa zoom/join.ts).
    const banner = el('<div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" role="region" aria-label="Cookie banner">' +
      '<p>By clicking “Accept Cookies”, you agree to the storing of cookies on your device.</p>' +
      '<button id="onetrust-reject-all-handler">Reject All</button> <button id="onetrust-accept-btn-handler">Accept Cookies</button></div></div>');
    document.body.append(banner);
    for (const b of banner.querySelectorAll("button")) {
      guard(b, "click", () => {
        state.cookiesAnswered = true;
        banner.remove();
        showPermissionDialog();
      });
    }
  }

  function showPermissionDialog() {
    // Shown twice: camera and microphone, then microphone only (Vexa zoom/join.ts).
    const first = state.permissionsAnswered === 0;
    const dialog = el('<div class="zm-modal permission-dialog" role="dialog"><div class="zm-modal-body-title">' +
      (first ? "Do you want people to see and hear you in the meeting?" : "Do you want people to hear you in the meeting?") +
      '</div><button class="zm-btn zm-btn--primary">Allow</button> <button class="zm-btn">Continue without microphone and camera</button></div>');
    document.body.append(dialog);
    const [allow, without] = dialog.querySelectorAll("button");
    guard(allow, "click", async () => {
      dialog.remove();
      state.permissionsAnswered++;
      state.audioPermitted = await window.sim.acquireMic();
      if (state.permissionsAnswered < 2) showPermissionDialog();
    });
    guard(without, "click", () => {
      // Without Allow, Zoom never joins the meeting's audio: nothing is heard, nothing is sent.
      dialog.remove();
      state.permissionsAnswered = 2;
      state.audioPermitted = false;
      state.previewMic = false;
    });
  }

  function renderBotWall() {
    root.replaceChildren(el('<div class="bot-wall" role="dialog"><h3>We detected you may be a bot</h3>' +
      '<p>Automated bots aren’t allowed to join this meeting or webinar and must use Zoom RTMS.</p>' +
      '<iframe title="reCAPTCHA" src="about:blank#recaptcha" width="300" height="70"></iframe>' +
      '<button class="zm-btn">Sign in to join</button></div>'));
    send({ t: "refused", why: "automation", webdriver: navigator.webdriver === true, ua: navigator.userAgent });
  }

  // --- waiting room ------------------------------------------------------------------
  function renderWaiting() {
    root.replaceChildren(el('<div class="meeting-app"><div class="wr-container"><div class="wr-content">' +
      '<h3 class="wr-title">Please wait, the meeting host will let you in soon.</h3>' +
      '<p>Host has joined. We\'ve let them know you\'re here.</p></div>' +
      '<button class="zm-btn leave-btn" aria-label="Leave">Leave</button></div></div>'));
    guard(root.querySelector(".leave-btn"), "click", () => send({ t: "leave" }));
  }

  // --- in the call -------------------------------------------------------------------
  let hideTimer = 0;
  function renderCall() {
    root.replaceChildren(el('<div class="meeting-app"><div id="wc-container-left">' +
      '<div class="speaker-view"><div class="speaker-active-container__video-frame" hidden><div class="video-avatar__avatar"><div class="video-avatar__avatar-footer"><span></span></div></div></div>' +
      '<div class="speaker-bar-container__video-frame"><div class="video-avatar__avatar"><div class="video-avatar__avatar-footer"><span>' + esc(state.botName) + '</span></div></div></div></div>' +
      '<footer id="wc-footer" class="footer"><div class="footer__inner">' +
      '<div class="join-audio-container"><button class="zm-btn join-audio-container__btn" aria-label="join audio">Join Audio</button></div>' +
      '<div class="send-video-container"><button class="zm-btn send-video-container__btn" aria-label="start sending my video">Start Video</button></div>' +
      '<button class="footer-button-base__button participants-btn"><div class="footer-button__participants-icon"><span class="footer-button__number-counter"><span></span></span></div><span class="footer-button-base__button-label">Participants</span></button>' +
      '<button class="footer-button-base__button chat-btn" aria-label="open the chat panel">Chat</button>' +
      '<div footer-section="right"><button class="footer-button-base__button ax-outline footer-button__button" aria-label="Leave">Leave</button></div>' +
      '</div></footer></div><div id="wc-container-right"></div></div>'));
    const footer = root.querySelector("#wc-footer");
    // The toolbar hides a few seconds after the last mouse move (Vexa #966): present, not visible.
    const wake = () => { footer.classList.remove("footer--hidden"); clearTimeout(hideTimer); hideTimer = setTimeout(() => footer.classList.add("footer--hidden"), 3000); };
    document.addEventListener("mousemove", wake);
    wake();
    guard(root.querySelector(".join-audio-container__btn"), "click", () => {
      if (!state.audioJoined) return showAudioDialog();
      window.sim.setMic(!window.sim.media.micOn);
      showMic();
    });
    guard(root.querySelector(".participants-btn"), "click", () => { state.participantsOpen = !state.participantsOpen; renderPanels(); }, "Participants");
    guard(root.querySelector(".chat-btn"), "click", () => { state.chatOpen = !state.chatOpen; renderPanels(); });
    guard(root.querySelector('[footer-section="right"] button'), "click", showLeaveConfirm);
    showCount();
    showSpeaker();
    afterAdmission();
  }

  function afterAdmission() {
    if (state.consent && !state.consentAcked) return showConsent();
    if (!state.audioJoined && state.audioPermitted) showAudioDialog();
  }

  function showConsent() {
    if (document.querySelector(".recording-consent")) return;
    const d = el('<div class="zm-modal recording-consent" role="dialog"><div class="zm-modal-body-title">This meeting is being recorded</div>' +
      '<div class="zm-modal-body-content">By continuing to be in the meeting, you are consenting to be recorded.</div>' +
      '<button class="zm-btn zm-btn--primary">Got it</button> <button class="zm-btn">Leave Meeting</button></div>');
    document.body.append(d);
    const [ok, leave] = d.querySelectorAll("button");
    guard(ok, "click", () => { d.remove(); state.consentAcked = true; send({ t: "consent" }); afterAdmission(); });
    guard(leave, "click", () => { d.remove(); leaveNow(); });
  }

  function showAudioDialog() {
    if (document.querySelector(".join-dialog") || !state.audioPermitted) return;
    const d = el('<div class="zm-modal join-dialog" role="dialog"><div class="zm-modal-body-title">Join Audio</div>' +
      '<button class="zm-btn join-audio-by-voip__join-btn">Join Audio by Computer</button></div>');
    document.body.append(d);
    guard(d.querySelector("button"), "click", () => {
      d.remove();
      state.audioJoined = true;
      window.sim.setMic(state.joinMic);
      window.sim.joinMedia();
      showMic();
    });
  }

  function showMic() {
    const b = root.querySelector(".join-audio-container__btn");
    if (!b) return;
    const label = !state.audioJoined ? "join audio" : window.sim.media.micOn ? "mute my microphone" : "unmute my microphone";
    b.setAttribute("aria-label", label);
    b.textContent = !state.audioJoined ? "Join Audio" : window.sim.media.micOn ? "Mute" : "Unmute";
  }

  function showCount() {
    const n = state.participants.length + 1;
    const b = root.querySelector(".participants-btn");
    if (!b) return;
    b.setAttribute("aria-label", "open the participants list pane,[" + n + "] particpants");
    b.querySelector(".footer-button__number-counter span").textContent = String(n);
  }

  function showSpeaker() {
    // Speaker view: one active tile, the last one who spoke (kept while nobody speaks).
    const frame = root.querySelector(".speaker-active-container__video-frame");
    if (!frame) return;
    frame.hidden = state.speaker === "";
    frame.querySelector("span").textContent = state.speaker;
  }

  function renderPanels() {
    const right = root.querySelector("#wc-container-right");
    if (!right) return;
    let p = right.querySelector(".participants-section-container");
    if (!state.participantsOpen) { if (p) p.remove(); }
    else {
      // Zoom renders the participant list only while its panel is open.
      if (!p) { p = el('<div class="participants-section-container"><div class="participants-header__title"></div><ul class="participants-ul"></ul></div>'); right.prepend(p); }
      p.querySelector(".participants-header__title").textContent = "Participants (" + (state.participants.length + 1) + ")";
      const ul = p.querySelector("ul");
      const row = (name, label) => el('<li class="participants-li"><div class="participants-item__item-layout"><span class="participants-item__display-name">' + esc(name) + '</span>' +
        (label ? ' <span class="participants-item__name-label">' + esc(label) + '</span>' : "") + '</div></li>');
      ul.replaceChildren(row(state.botName, "(Me)"), ...state.participants.map((name, i) => row(name, i === 0 ? "(Host)" : "")));
    }
    let c = right.querySelector(".chat-container");
    if (!state.chatOpen) { if (c) c.remove(); }
    else if (!c) {
      c = el('<div class="chat-container"><div class="chat-header__title">Meeting Chat</div><div aria-label="Chat Message List" class="chat-list"></div>' +
        '<textarea class="chat-box__chat-textarea" aria-label="Type message here ..."></textarea></div>');
      right.append(c);
      for (const m of state.chat) appendChat(m);
      const box = c.querySelector("textarea");
      guard(box, "keydown", (e) => {
        if (e.key !== "Enter" || e.shiftKey) return;
        e.preventDefault();
        const text = box.value.trim();
        if (text) send({ t: "chat", text });
        box.value = "";
      }, "chat box");
    }
  }

  function appendChat(m) {
    const list = root.querySelector('[aria-label="Chat Message List"]');
    if (!list) return;
    const time = new Date(m.at).toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
    const first = !list.lastElementChild || list.lastElementChild.dataset.from !== m.from;
    const item = el('<div class="new-chat-message__container" aria-label="' + esc(m.from) + ' said to Everyone at ' + time + ': ' + esc(m.text) + '">' +
      (first ? '<div class="chat-item__sender">' + esc(m.from) + '</div><span class="chat-item__chat-info-time-stamp">' + time + '</span>' : "") +
      '<div class="new-chat-message__text-content">' + esc(m.text) + '</div></div>');
    item.dataset.from = m.from;
    list.append(item);
  }

  function toast(m) {
    // With the panel closed, a new message pops up over the meeting for a few seconds.
    const t = el('<div class="chat-toast" role="status"><b>' + esc(m.from) + '</b> to Everyone: ' + esc(m.text) + '</div>');
    document.body.append(t);
    setTimeout(() => t.remove(), 5000);
  }

  function showLeaveConfirm() {
    if (document.querySelector(".leave-meeting-options")) return;
    const d = el('<div class="leave-meeting-options" role="dialog"><button class="zm-btn leave-meeting-options__btn leave-meeting-options__btn--danger" aria-label="">Leave Meeting</button></div>');
    root.append(d);
    const b = d.querySelector("button");
    guard(b, "click", leaveNow, "Leave Meeting");
    // Enter dismisses the dialog instead of confirming (Vexa zoom/leave.ts).
    document.addEventListener("keydown", (e) => { if (e.key === "Enter") d.remove(); }, { once: true });
  }

  function leaveNow() {
    send({ t: "leave" });
    window.sim.leaveMedia();
    location.assign("/wc/leave");
  }

  function endDialog(text, label) {
    window.sim.leaveMedia();
    if (document.querySelector(".end-dialog")) return;
    // The meeting's UI stays behind the dialog until OK (the footer's Leave included).
    document.body.append(el('<div class="zm-modal end-dialog" role="dialog"' + (label ? ' aria-label="' + label + '"' : "") +
      '><div class="zm-modal-body-title">' + text + '</div><button class="zm-btn zm-btn--primary">OK</button></div>'));
  }

  // --- server state ------------------------------------------------------------------
  on("state", (m) => {
    const before = state.phase;
    state.participants = m.participants;
    state.botWall = m.botWall;
    state.consent = m.consent || state.consent && !m.consentGiven;
    if (m.phase === before) {
      showCount();
      renderPanels();
      return;
    }
    if (before === "prejoin" && m.phase !== "prejoin") {
      state.botName = state.typedName;
      state.joinMic = state.previewMic && state.audioPermitted;
    }
    state.phase = m.phase;
    if (m.phase === "waiting") renderWaiting();
    else if (m.phase === "in_call") renderCall();
    else if (m.phase === "ended") endDialog("This meeting has been ended by host", "Meeting is end now");
    else if (m.phase === "removed") endDialog("You have been removed from this meeting", "");
    else if (m.phase === "denied") endDialog("The host has removed you from the waiting room", "");
    else if (m.phase === "prejoin") renderPrejoin();
  });
  on("speaking", (m) => {
    if (m.names.length > 0) state.speaker = m.names[m.names.length - 1];
    showSpeaker();
  });
  on("chat", (m) => {
    state.chat.push(m);
    if (state.phase !== "in_call") return;
    if (state.chatOpen) appendChat(m);
    else toast(m);
  });
  renderPrejoin();
  window.sim.open();
})();
`;
