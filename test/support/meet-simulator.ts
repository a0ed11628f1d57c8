/**
 * A Google Meet simulator for the whole bot, written from the facts of the
 * maintained open bots (docs/meetings.md, "Google Meet: screens handled"),
 * and adversarial where Meet is:
 *
 * - it refuses an automated browser: `navigator.webdriver === true` or a
 *   user agent with "HeadlessChrome" gets "You can’t join this video call"
 *   (issue 41 point 1; the text from attendee google_meet_ui_methods.py
 *   look_for_blocked_element), and so do the first `refuseLoads` loads of a
 *   meeting (Google's refusals that the references retry);
 * - it ignores untrusted input: every button checks `event.isTrusted`, the
 *   name counts only when typed (trusted `input` events); each untrusted
 *   click is counted in `untrusted`;
 * - the pre-join "Ask to join" is disabled until the page is ready (1.5 s);
 * - the lobby shows a Leave call button and only the live copy with a curly
 *   apostrophe ("You’ll join the call when someone lets you in": Vexa
 *   googlemeet/selectors.ts);
 * - after admission a recording notice (a dialog with "Join now": attendee
 *   click_this_meeting_is_being_recorded_join_now_button) holds the bot out
 *   of the call's media until it is accepted; or, with `consent: "gemini"`,
 *   the host's Gemini notes notice (a dialog "Gemini is taking notes" with
 *   Leave / Join now: Vexa-ai/vexa PR #1251; attendee
 *   google_meet_chromedriver_payload.js), over participant tiles and call
 *   controls, whose Leave or Escape refuses the bot (Meeting-BaaS/meet-teams-bot
 *   PR #105: dismissing it gets the bot rejected), and once accepted a
 *   "Gemini is taking notes" pill stays on the call's page (Vexa
 *   googlemeet/selectors.ts);
 * - in the call: the call-controls region, participant tiles, the captions
 *   button, and the chat panel open with its history, where a participant
 *   writes "the meeting has ended";
 * - media: the "SFU" is a same-origin iframe (the bot's capture script hooks
 *   only the top window's RTCPeerConnection, as it hooks Meet's), which
 *   sends each participant's recorded voice (WAVs the test gives) on its own
 *   RTP stream and measures the bot's outgoing audio, counted only while
 *   Meet's microphone toggle is on: Meet sends nothing from a muted
 *   microphone;
 * - who is whom: as on Meet, remote audio plays from elements outside the
 *   tiles, so no track names anyone; the only link from a stream to a person
 *   is Meet's own signalling, which the simulator sends as Meet does
 *   (attendee-labs/attendee bots/google_meet_bot_adapter/
 *   google_meet_chromedriver_payload.js, its `CollectionEvent` message types
 *   and the `collections` data channel handler): a data channel labelled
 *   `collections` opened by the server side, carrying zlib-deflated protobuf
 *   `CollectionEvent`s, first the device outputs (stream id = the RTP source
 *   in decimal -> device id; an audio and a video output), 1.5 s later the
 *   user list (device id -> full and display name; the bot's own entry with
 *   `isCurrentUserString`; a screen share's device with `parentDeviceId`),
 *   so a name arrives after the first words. A voice with `named: false`
 *   has no device output at all: nobody can name it;
 * - ends: "The call ended", "You’ve been removed from the meeting",
 *   "Someone in the call denied your request to join" as Meet's own headings.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export type SimState = "prejoin" | "lobby" | "consent" | "in_call" | "ended" | "removed" | "denied";

export interface SimMeetingOptions {
  /** The first N loads get "You can’t join this video call". Default 0. */
  refuseLoads?: number;
  /**
   * A notice to accept after admission: true or "recording" (default), the
   * recording notice; "gemini", the Gemini notes notice; false, none.
   */
  consent?: boolean | "recording" | "gemini";
  /** The participant's voice (a WAV file, ending in its own pause), looped in the call: Alice Example's. */
  voiceWav?: string;
  /**
   * Participants speaking in the call, each on its own RTP stream (instead of
   * `voiceWav`): the name on their tile and in Meet's user list, a WAV looped
   * from a second on, and `named: false` for a stream Meet's signalling never
   * maps to a device. Default: Alice Example with `voiceWav`, if given.
   */
  voices?: SimVoice[];
}

export interface SimVoice {
  name: string;
  wav: string;
  named?: boolean;
}

export interface SimMeeting {
  readonly code: string;
  readonly state: SimState;
  /** Each page load: refused (and why) or served. */
  readonly loads: { refused: string | null; userAgent: string }[];
  /** Each "Ask to join": the typed name and the devices as the page saw them. */
  readonly asks: { name: string; microphone: boolean; camera: boolean }[];
  /** Untrusted clicks the page ignored (what was clicked). */
  readonly untrusted: string[];
  /** The recording notice accepted (a trusted click). */
  readonly consented: boolean;
  /** Meet's microphone toggle, as the page last reported it. */
  readonly microphone: boolean | undefined;
  /** Loudest bot audio the SFU received while the microphone toggle was on (RMS, 0..1). */
  readonly heardLevel: number;
  /** Bot audio received while the toggle was off, dropped (RMS): what a muted Meet would not send. */
  readonly droppedLevel: number;
  admit(): void;
  deny(): void;
  end(): void;
  remove(): void;
  say(from: string, text: string): void;
}

export interface MeetSimulator {
  /** `http://127.0.0.1:<port>`: what goes into meetings.googleMeet.testOrigins. */
  readonly origin: string;
  meeting(code: string, options?: SimMeetingOptions): SimMeeting;
  close(): Promise<void>;
}

interface MeetingRecord {
  public: SimMeeting;
  state: SimState;
  options: SimMeetingOptions;
  chat: { from: string; text: string; time: string }[];
  loads: SimMeeting["loads"];
  asks: SimMeeting["asks"];
  untrusted: string[];
  consented: boolean;
  microphone: boolean | undefined;
  heardLevel: number;
  droppedLevel: number;
}

export async function startMeetSimulator(): Promise<MeetSimulator> {
  const meetings = new Map<string, MeetingRecord>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, code = "", action] = url.pathname.split("/");
    const m = meetings.get(code);
    const send = (status: number, type: string, body: string | Buffer): void => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" }).end(body);
    };
    if (!m) return send(404, "text/html", "<h1>Check your meeting code</h1>");
    if (req.method === "GET" && action === undefined) {
      const refused = m.loads.length < (m.options.refuseLoads ?? 0) ? "google" : null;
      m.loads.push({ refused, userAgent: String(req.headers["user-agent"] ?? "") });
      const names = voicesOf(m.options).map((v) => v.name);
      return send(
        200,
        "text/html; charset=utf-8",
        page(refused !== null, names.length ? names : ["Alice Example"], m.options.consent === "gemini"),
      );
    }
    if (req.method === "GET" && action === "sfu") return send(200, "text/html; charset=utf-8", SFU_PAGE);
    if (req.method === "GET" && action === "voices")
      return send(
        200,
        "application/json",
        JSON.stringify(voicesOf(m.options).map((v) => ({ name: v.name, named: v.named !== false }))),
      );
    const voiceFile = /^voice-([0-9]+)\.wav$/.exec(action ?? "");
    if (req.method === "GET" && voiceFile) {
      const voice = voicesOf(m.options)[Number(voiceFile[1])];
      if (!voice) return send(404, "text/plain", "no voice");
      return send(200, "audio/wav", readFileSync(voice.wav));
    }
    if (req.method === "GET" && action === "state")
      return send(200, "application/json", JSON.stringify({ state: m.state, chat: m.chat }));
    if (req.method === "POST" && action === "event") {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      const e = JSON.parse(body) as Record<string, unknown>;
      switch (e["type"]) {
        case "refused":
          m.loads[m.loads.length - 1]!.refused = String(e["why"]);
          break;
        case "untrusted":
          m.untrusted.push(String(e["what"]));
          break;
        case "ask":
          if (m.state === "prejoin") {
            m.asks.push({
              name: String(e["name"]),
              microphone: e["microphone"] === true,
              camera: e["camera"] === true,
            });
            m.state = "lobby";
          }
          break;
        case "consent":
          if (m.state === "consent") {
            m.consented = true;
            m.state = "in_call";
          }
          break;
        case "microphone":
          m.microphone = e["on"] === true;
          break;
        case "level": {
          const level = Number(e["level"]) || 0;
          if (e["microphone"] === true) m.heardLevel = Math.max(m.heardLevel, level);
          else m.droppedLevel = Math.max(m.droppedLevel, level);
          break;
        }
        case "left":
          m.state = "ended";
          break;
      }
      return send(204, "text/plain", "");
    }
    return send(404, "text/plain", "no such route");
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };

  return {
    origin: `http://127.0.0.1:${port}`,
    meeting(code, options = {}) {
      const record = {
        state: "prejoin" as SimState,
        options,
        chat: [
          { from: "Alice Example", text: "Hello all", time: "10:04 AM" },
          { from: "Alice Example", text: "the meeting has ended", time: "10:05 AM" },
        ],
        loads: [] as SimMeeting["loads"],
        asks: [] as SimMeeting["asks"],
        untrusted: [] as string[],
        consented: false,
        microphone: undefined as boolean | undefined,
        heardLevel: 0,
        droppedLevel: 0,
      } as MeetingRecord;
      const set = (state: SimState) => {
        record.state = state;
      };
      record.public = {
        code,
        get state() {
          return record.state;
        },
        get loads() {
          return record.loads;
        },
        get asks() {
          return record.asks;
        },
        get untrusted() {
          return record.untrusted;
        },
        get consented() {
          return record.consented;
        },
        get microphone() {
          return record.microphone;
        },
        get heardLevel() {
          return record.heardLevel;
        },
        get droppedLevel() {
          return record.droppedLevel;
        },
        admit: () => set(options.consent === false ? "in_call" : "consent"),
        deny: () => set("denied"),
        end: () => set("ended"),
        remove: () => set("removed"),
        say: (from, text) => record.chat.push({ from, text, time: "10:07 AM" }),
      };
      meetings.set(code, record);
      return record.public;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The call's speakers: `voices`, else Alice Example with `voiceWav`. */
function voicesOf(options: SimMeetingOptions): SimVoice[] {
  if (options.voices) return options.voices;
  return options.voiceWav ? [{ name: "Alice Example", wav: options.voiceWav }] : [];
}

/** The SFU: a same-origin iframe with the native RTCPeerConnection (the capture script hooks only the top window). */
const SFU_PAGE = `<!doctype html><html><body><script>
window.sfu = {
  async connect(offer, base, micOn, report) {
    const ctx = new AudioContext();
    const pc = new RTCPeerConnection();
    const voices = await (await fetch(base + "/voices")).json();
    // Each participant's voice on its own stream, looped from a second on (the WAV carries its own pause).
    const tracks = [];
    for (let i = 0; i < Math.max(1, voices.length); i++) {
      const out = ctx.createMediaStreamDestination();
      if (voices[i]) {
        try {
          const data = await (await fetch(base + "/voice-" + i + ".wav")).arrayBuffer();
          const buffer = await ctx.decodeAudioData(data);
          const play = ctx.createBufferSource();
          play.buffer = buffer;
          play.loop = true;
          play.connect(out);
          play.start(ctx.currentTime + 1);
        } catch {}
      }
      const track = out.stream.getAudioTracks()[0];
      tracks.push(track);
      pc.addTrack(track, out.stream);
    }
    // The bot's microphone: measured, counted only while Meet's toggle is on (a muted Meet sends nothing).
    pc.ontrack = (event) => {
      const stream = new MediaStream([event.track]);
      const sink = new Audio(); sink.muted = true; sink.srcObject = stream; sink.play().catch(() => {});
      const analyser = ctx.createAnalyser();
      analyser.fftSize = 2048;
      ctx.createMediaStreamSource(stream).connect(analyser);
      const samples = new Float32Array(analyser.fftSize);
      setInterval(() => {
        analyser.getFloatTimeDomainData(samples);
        let sum = 0;
        for (const s of samples) sum += s * s;
        const level = Math.sqrt(sum / samples.length);
        if (level > 0.001) report(level, micOn());
      }, 100);
    };
    await pc.setRemoteDescription(offer);
    await pc.setLocalDescription(await pc.createAnswer());
    await new Promise((r) => { if (pc.iceGatheringState === "complete") r(); else pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && r(); });
    ctx.resume().catch(() => {});
    signal(pc, voices, tracks);
    return pc.localDescription.toJSON();
  },
};

// The RTP source (SSRC) this side sends a track with, from its own session description.
function ssrcOf(sdp, trackId) {
  for (const section of sdp.split(/\\r?\\nm=/)) {
    if (!section.includes(" " + trackId)) continue;
    const m = /a=ssrc:([0-9]+) /.exec(section);
    if (m) return m[1];
  }
  return null;
}

// A protobuf message from [field, value] pairs: a number is a varint, a string or nested pairs length-delimited.
function proto(fields) {
  const out = [];
  const varint = (n) => { while (n >= 128) { out.push((n % 128) | 128); n = Math.floor(n / 128); } out.push(n); };
  for (const [field, value] of fields) {
    if (typeof value === "number") { varint(field * 8); varint(value); continue; }
    const bytes = typeof value === "string" ? new TextEncoder().encode(value) : proto(value);
    varint(field * 8 + 2); varint(bytes.length);
    for (const b of bytes) out.push(b);
  }
  return Uint8Array.from(out);
}

async function deflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// A CollectionEvent: body (1) -> (2) -> deviceInfoWrapper (3) / userInfoListWrapperAndChatWrapper (13).
const collectionEvent = (inner) => proto([[1, [[2, inner]]]]);

// Meet's signalling as the bot's page receives it: a "collections" channel opened by the server side.
function signal(pc, voices, tracks) {
  const channel = pc.createDataChannel("collections");
  const device = (i) => "spaces/sim/devices/" + (100 + i);
  channel.onopen = async () => {
    const outputs = [];
    voices.forEach((v, i) => {
      const ssrc = ssrcOf(pc.localDescription.sdp, tracks[i].id);
      if (!v.named || !ssrc) return;
      // deviceOutputType 1 audio, streamId, deviceId, deviceOutputStatus {disabled 0}.
      outputs.push([2, [[2, 1], [4, ssrc], [6, device(i)], [10, [[1, 0]]]]]);
      // Its camera, a stream the bot never receives.
      outputs.push([2, [[2, 2], [4, String(900000 + i)], [6, device(i)], [10, [[1, 1]]]]]);
    });
    channel.send(await deflate(collectionEvent([[3, outputs]])));
    await new Promise((r) => setTimeout(r, 1500));
    const users = voices.map((v, i) => [2, [[1, device(i)], [2, v.name], [4, 1], [29, v.name.split(" ")[0]]]]);
    // The bot itself (isCurrentUserString), and the first speaker's screen share (parentDeviceId).
    users.push([2, [[1, "spaces/sim/devices/9"], [2, "Notetaker"], [4, 1], [7, "b0f1c2"]]]);
    if (voices.length) users.push([2, [[1, "spaces/sim/devices/99"], [2, voices[0].name + " (Presentation)"], [4, 1], [21, device(0)]]]);
    channel.send(await deflate(collectionEvent([[13, [[1, [[1, [[1, 7]]], ...users]]]]])));
  };
}
</script></body></html>`;

/** The meeting page: Meet's screens as the bot's browser sees them. */
function page(refusedByServer: boolean, names: string[], gemini: boolean): string {
  return `<!doctype html><html lang="en"><head><title>Meet</title><style>
button, [role=button] { margin: 6px; padding: 8px 14px; font-size: 15px; }
[role=region] { position: fixed; bottom: 0; left: 0; right: 380px; background: #202124; padding: 6px; }
[role=complementary] { position: fixed; top: 0; right: 0; width: 360px; height: 100%; overflow: auto; background: #fff; }
[role=dialog] { position: fixed; top: 30%; left: 30%; width: 400px; background: #fff; border: 1px solid #888; padding: 12px; z-index: 10; }
.tile { display: inline-block; width: 220px; height: 130px; background: #3c4043; color: #fff; margin: 4px; }
</style></head><body><div id="root"></div><script>
(() => {
  const base = "/" + location.pathname.split("/")[1];
  const NAMES = ${JSON.stringify(names)};
  const root = document.getElementById("root");
  const post = (e) => fetch(base + "/event", { method: "POST", body: JSON.stringify(e) });
  let state = "";
  let micOn = true, camOn = true, typedName = "", ready = false, media = null, joined = false;
  const untrusted = (what) => post({ type: "untrusted", what });
  // Every control takes trusted input only, as Meet does.
  const on = (el, what, fn) => el.addEventListener("click", (ev) => { if (!ev.isTrusted) return untrusted(what); fn(ev); });
  const automated = navigator.webdriver === true ? "navigator.webdriver" : /HeadlessChrome/.test(navigator.userAgent) ? "HeadlessChrome" : null;
  if (automated || ${refusedByServer}) {
    if (automated) post({ type: "refused", why: automated });
    root.innerHTML = "<h1>You can\\u2019t join this video call</h1><div>Return to home screen</div>";
    return;
  }
  const toggles = () => \`<button id="mic" aria-label="\${micOn ? "Turn off microphone (ctrl + d)" : "Turn on microphone (ctrl + d)"}">mic</button><button id="cam" aria-label="\${camOn ? "Turn off camera (ctrl + e)" : "Turn on camera (ctrl + e)"}">cam</button>\`;
  const wireToggles = () => {
    on(document.getElementById("mic"), "microphone", () => { micOn = !micOn; post({ type: "microphone", on: micOn }); render(state, true); });
    on(document.getElementById("cam"), "camera", () => { camOn = !camOn; render(state, true); });
  };
  const render = (s, force) => {
    if (s === state && !force) return;
    state = s;
    if (s === "prejoin") {
      root.innerHTML = '<h1>Ready to join?</h1><input type="text" aria-label="Your name" placeholder="Your name" id="name">' + toggles() + '<button id="ask" ' + (ready ? "" : "disabled") + '>Ask to join</button>';
      const name = document.getElementById("name");
      name.value = typedName;
      name.addEventListener("input", (ev) => { if (ev.isTrusted) typedName = name.value; });
      wireToggles();
      on(document.getElementById("ask"), "ask", () => { if (typedName.trim()) post({ type: "ask", name: typedName, microphone: micOn, camera: camOn }); });
    } else if (s === "lobby") {
      root.innerHTML = '<div>You\\u2019ll join the call when someone lets you in</div>' + toggles() + '<button aria-label="Leave call" id="leave">call_end</button>';
      wireToggles();
      on(document.getElementById("leave"), "leave", () => post({ type: "left" }));
    } else if (s === "consent" || s === "in_call") {
      if (!document.getElementById("stage")) {
        root.innerHTML = '<div id="stage">' + NAMES.map((n, i) => '<div class="tile" data-participant-id="spaces/sim/devices/' + (100 + i) + '"><span class="notranslate"></span></div>').join("") + '<div class="tile" data-participant-id="spaces/sim/devices/9"><span data-self-name="bot">You</span></div></div>'
          + '<div role="region" aria-label="Call controls" id="controls"></div>'
          + '<aside role="complementary" aria-label="Side panel"><h2>In-call messages</h2><div aria-live="polite" class="Ge9Kpc" id="chat"></div></aside><div id="dialog"></div>';
        document.querySelectorAll("#stage .notranslate").forEach((el, i) => { el.textContent = NAMES[i]; });
      }
      const controls = document.getElementById("controls");
      controls.innerHTML = toggles() + '<button aria-label="Turn on captions">cc</button><button aria-label="Leave call" id="leave">call_end</button>';
      wireToggles();
      on(document.getElementById("leave"), "leave", () => post({ type: "left" }));
      const dialog = document.getElementById("dialog");
      if (s === "consent" && ${gemini}) {
        dialog.innerHTML = '<div role="dialog" aria-modal="true" tabindex="-1" id="gemini"><h2>Gemini is taking notes</h2><button id="consent-leave" data-mdc-dialog-action="cancel">Leave</button><button id="consent-join" data-mdc-dialog-action="ok">Join now</button></div>';
        on(document.getElementById("consent-join"), "consent", () => post({ type: "consent" }));
        on(document.getElementById("consent-leave"), "leave", () => post({ type: "left" }));
        // Dismissing the notice is refusing it.
        document.getElementById("gemini").addEventListener("keydown", (ev) => { if (ev.key === "Escape" && ev.isTrusted) post({ type: "left" }); });
      } else if (s === "consent") {
        dialog.innerHTML = '<div role="dialog" aria-modal="true"><h2>This call is being recorded</h2><div>By joining you consent to being recorded.</div><button id="consent-leave">Leave call</button><button id="consent-join">Join now</button></div>';
        on(document.getElementById("consent-join"), "consent", () => post({ type: "consent" }));
        on(document.getElementById("consent-leave"), "leave", () => post({ type: "left" }));
      } else {
        // While Gemini takes notes, Meet keeps a pill saying so on the call's page (not a dialog).
        dialog.innerHTML = ${gemini} ? '<div class="notes-pill">Gemini is taking notes</div>' : "";
        if (!joined) { joined = true; connect(); }
      }
    } else if (s === "ended") {
      root.innerHTML = "<h1>The call ended</h1><button>Return to home screen</button>";
    } else if (s === "removed") {
      root.innerHTML = "<h1>You\\u2019ve been removed from the meeting</h1><button>Return to home screen</button>";
    } else if (s === "denied") {
      root.innerHTML = "<h1>You can\\u2019t join this call</h1><div>Someone in the call denied your request to join</div><button>Return to home screen</button>";
    }
  };
  let shownChat = 0;
  const showChat = (chat) => {
    const list = document.getElementById("chat");
    if (!list) return;
    for (const m of chat.slice(shownChat)) {
      const run = document.createElement("div");
      run.className = "Ss4fHf";
      run.innerHTML = '<div class="QTyiie"><div class="poVWob"></div><div class="MuzmKe"></div></div><div data-message-id="m' + shownChat + '"><div jscontroller="RrV5Ic"></div></div>';
      run.querySelector(".poVWob").textContent = m.from;
      run.querySelector(".MuzmKe").textContent = m.time;
      run.querySelector('[jscontroller="RrV5Ic"]').textContent = m.text;
      list.append(run);
      shownChat++;
    }
  };
  // Meet asks for the devices on the pre-join screen.
  (async () => {
    try { media = await navigator.mediaDevices.getUserMedia({ audio: true, video: true }); }
    catch { try { media = await navigator.mediaDevices.getUserMedia({ audio: true }); } catch {} }
  })();
  async function connect() {
    const frame = document.createElement("iframe");
    frame.style.display = "none";
    frame.src = base + "/sfu";
    document.body.append(frame);
    await new Promise((r) => frame.addEventListener("load", r, { once: true }));
    const pc = new RTCPeerConnection();
    if (media) for (const t of media.getAudioTracks()) pc.addTrack(t, media);
    // Meet's client opens data channels of its own (so the call has one), and receives on a few audio streams.
    pc.createDataChannel("client");
    for (let i = 0; i < NAMES.length; i++) pc.addTransceiver("audio", { direction: "recvonly" });
    pc.ontrack = (ev) => { const a = new Audio(); a.srcObject = new MediaStream([ev.track]); a.play().catch(() => {}); };
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((r) => { if (pc.iceGatheringState === "complete") r(); else pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && r(); });
    const answer = await frame.contentWindow.sfu.connect(pc.localDescription.toJSON(), base, () => micOn, (level, mic) => post({ type: "level", level, microphone: mic }));
    await pc.setRemoteDescription(answer);
  }
  render("prejoin");
  post({ type: "microphone", on: micOn });
  // "Ask to join" is disabled until the page is ready.
  setTimeout(() => { ready = true; if (state === "prejoin") { const b = document.getElementById("ask"); if (b) b.disabled = false; } }, 1500);
  setInterval(async () => {
    try {
      const { state: s, chat } = await (await fetch(base + "/state")).json();
      render(s);
      showChat(chat);
    } catch {}
  }, 200);
})();
</script></body></html>`;
}
