/**
 * Page-side plumbing shared by the simulated Zoom and Teams clients (a string
 * of browser JavaScript, like the test room's page): the socket to the
 * simulator, trusted-input guards, the automation check, and the client's
 * media (a peer connection with the meeting's media core, the microphone sent
 * only while the platform's mic control is on).
 *
 * Defines on `window.sim`: `send(message)`, `on(type, handler)`,
 * `guard(element, type, handler)` (the handler runs only for trusted events;
 * every use is reported with `trusted`), `automated()` (navigator.webdriver or
 * a HeadlessChrome user agent), `acquireMic()`, `setMic(on)`, `joinMedia()`.
 */
export const SIM_CLIENT_LIB = String.raw`
(() => {
  const meeting = window.SIM_MEETING;
  const handlers = new Map();
  let ws = null;
  const queue = [];
  function open() {
    ws = new WebSocket("ws://" + location.host + "/sim/ws?role=client&meeting=" + meeting);
    ws.onopen = () => { for (const m of queue.splice(0)) ws.send(JSON.stringify(m)); };
    ws.onmessage = (event) => {
      const m = JSON.parse(event.data);
      for (const h of handlers.get(m.t) || []) { try { h(m); } catch (err) { console.error(err); } }
    };
  }
  function send(m) {
    if (ws && ws.readyState === 1) ws.send(JSON.stringify(m)); else queue.push(m);
  }
  function on(type, handler) {
    if (!handlers.has(type)) handlers.set(type, []);
    handlers.get(type).push(handler);
  }
  // Live clients act on real input only: a synthetic el.click() or dispatched event is ignored (and, for
  // inputs with a default action such as checkboxes, undone).
  function guard(element, type, handler, what) {
    element.addEventListener(type, (event) => {
      const label = what || (element.getAttribute && element.getAttribute("aria-label")) || element.id || (element.textContent || "").trim().slice(0, 40);
      // Keystrokes are reported only when they act (Enter, shortcuts), not for every letter typed.
      if (type !== "keydown" || event.key === "Enter" || event.ctrlKey) send({ t: "act", what: label, type, trusted: event.isTrusted });
      if (!event.isTrusted) { event.preventDefault(); event.stopImmediatePropagation(); return; }
      handler(event);
    }, true);
  }
  function automated() {
    return navigator.webdriver === true || /HeadlessChrome/.test(navigator.userAgent);
  }

  // --- media ------------------------------------------------------------------
  const media = { pc: null, sender: null, mic: null, micOn: false, allowed: true, wanted: false };
  async function acquireMic() {
    if (media.mic) return true;
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      media.mic = stream.getAudioTracks()[0] || null;
    } catch (err) {
      console.warn("no microphone", err);
    }
    return !!media.mic;
  }
  function applyMic() {
    // The platform sends the microphone only while its own mic control is on.
    if (media.sender) media.sender.replaceTrack(media.micOn && media.allowed && media.mic ? media.mic : null).catch(() => {});
  }
  function setMic(on) {
    media.micOn = !!on;
    applyMic();
    send({ t: "mic", on: media.micOn });
  }
  function joinMedia() {
    if (media.wanted) return;
    media.wanted = true;
    send({ t: "media" });
  }
  async function onSignal(data) {
    if (data.offer) {
      if (media.pc) media.pc.close();
      const pc = new RTCPeerConnection();
      media.pc = pc;
      pc.onicecandidate = (e) => { if (e.candidate) send({ t: "signal", data: { candidate: e.candidate.toJSON() } }); };
      await pc.setRemoteDescription(data.offer);
      const t = pc.getTransceivers().find((x) => x.mid === data.micMid);
      if (t) { t.direction = "sendonly"; media.sender = t.sender; }
      applyMic();
      await pc.setLocalDescription(await pc.createAnswer());
      send({ t: "signal", data: { answer: pc.localDescription.toJSON() } });
    } else if (data.candidate && media.pc) {
      await media.pc.addIceCandidate(data.candidate).catch(() => {});
    }
  }
  on("signal", (m) => { onSignal(m.data).catch((err) => console.error("signal failed", err)); });
  function leaveMedia() {
    if (media.pc) media.pc.close();
    media.pc = null;
    media.sender = null;
  }

  window.sim = { send, on, guard, automated, acquireMic, setMic, joinMedia, leaveMedia, media, open };
})();
`;

/** Escapes text for HTML (server side). */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
