/**
 * Simulators of Zoom's web client and Teams on the web, for the whole bot end
 * to end: an HTTP + WebSocket server on loopback that serves each platform's
 * pages (written from the facts of the open bots maintained against the live
 * platforms: see zoom-sim-page.ts, teams-sim-page.ts and docs/meetings.md) and
 * runs each meeting as a small state machine the test drives.
 *
 * Media is real WebRTC: the meeting's "media core" is a page the test opens in
 * its own Chromium (sim-core-page.ts). It plays the participants' recordings
 * (one mixed track for Zoom; Teams' one mixed `mainAudio` stream plus a
 * redundant track per speaker) into a peer connection with the bot's page, and
 * measures what the bot's microphone sends. The bot's page (the platform
 * client) connects to the core only once the platform would give it audio
 * (admitted, computer audio joined, consent given), and sends its microphone
 * only while the platform's own mic control is on.
 *
 * Adversarial, as the live clients are: every control ignores untrusted input
 * (`event.isTrusted` false) and the reports say so; a browser whose
 * `navigator.webdriver` is true or whose user agent says HeadlessChrome is
 * refused; lobbies show a Leave; rosters exist only in panels that must be
 * opened; the speaking marks lag the audio; participants can type anything in
 * the chat ("the meeting has ended").
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { basename } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { simCorePage } from "./sim-core-page.js";
import { teamsSimRoute } from "./teams-sim-page.js";
import { zoomSimRoute } from "./zoom-sim-page.js";

export type SimPlatform = "zoom" | "teams";

/** Where the meeting stands, as the platform's server sees it. */
export type SimPhase =
  | "prejoin" // the bot has not asked to join yet
  | "waiting" // in the waiting room / lobby
  | "in_call"
  | "denied"
  | "removed"
  | "ended"
  | "left";

export interface SimMeetingOptions {
  /** Everyone else in the call (the bot excluded), in roster order. */
  participants: string[];
  /** Zoom: false serves the "host has not started" error page (3,001) until `start()`. Default true. */
  hostStarted?: boolean;
  /** A waiting room / lobby the test admits from. Default true. */
  waitingRoom?: boolean;
  /** A recording consent dialog once in the call (Zoom: audio is withheld until it is acknowledged; Teams: unmuting fails until agreed). */
  consent?: boolean;
  /** How late the page's speaking marks follow the audio, ms. Default 300. */
  markLagMs?: number;
  /** Teams: the meeting link leads to a Microsoft sign-in page. */
  signInRequired?: boolean;
  /** Zoom: the meeting's account refuses browser bots (the anti-bot wall after Join, whoever asks). */
  botWall?: boolean;
}

/** What the bot's page reported: every control it was used through (trusted or not), and platform actions. */
export interface SimEvent {
  t: string;
  /** `act` events: which control, and whether the input was trusted. */
  what?: string;
  trusted?: boolean;
  [key: string]: unknown;
}

export interface SimChatMessage {
  from: string;
  text: string;
  at: string;
}

export interface SimMeeting {
  readonly id: string;
  readonly platform: SimPlatform;
  /** The meeting link a user would paste (the platform's own URL form, on the simulator's origin). */
  readonly url: string;
  readonly phase: SimPhase;
  /** The bot's display name as it asked to join ("" before). */
  readonly botName: string;
  readonly events: SimEvent[];
  readonly chat: SimChatMessage[];
  /** Every load of a meeting page (path and query), oldest first. */
  readonly loads: string[];
  /** The platform mic state the bot's page shows (true: the platform sends its microphone). */
  readonly botMicOn: boolean;
  /** Media connected (the platform gave the bot audio). */
  readonly mediaConnected: boolean;
  /** Zoom: the host starts the meeting (pages loaded afterwards show the pre-join). */
  start(): void;
  admit(): void;
  deny(): void;
  remove(): void;
  end(): void;
  /** A participant joins or leaves the call. */
  setParticipants(names: string[]): void;
  /** The page's speaking marks now, without audio (driver tests). */
  mark(names: string[]): void;
  /** A chat message from a participant. */
  say(from: string, text: string): void;
  /** `name` speaks the recording at `wav` (a file path); resolves when it has played. */
  speak(name: string, wav: string): Promise<void>;
  /** The loudest RMS of the bot's microphone the meeting received since `resetBotLevel()`. */
  botPeak(): number;
  resetBotLevel(): void;
  /** Resolves once `done()` holds, re-checked on every event (bounded by `ms`, then rejects naming `what`). */
  until(done: () => boolean, what: string, ms?: number): Promise<void>;
  /** Untrusted inputs the page ignored. */
  untrustedInputs(): SimEvent[];
}

export interface MeetingSimulator {
  /** `http://127.0.0.1:<port>`: what goes into meetings.<platform>.testOrigins. */
  readonly origin: string;
  meeting(platform: SimPlatform, options: SimMeetingOptions): SimMeeting;
  /** The media core page of a meeting: open it in the test's Chromium before the bot joins. */
  coreUrl(meeting: SimMeeting): string;
  close(): Promise<void>;
}

/** A meeting as the server keeps it (the SimMeeting view plus its sockets). */
export interface SimMeetingState extends SimMeeting {
  options: Required<Omit<SimMeetingOptions, "participants">> & { participants: string[] };
  hostStarted: boolean;
  phase: SimPhase;
  botName: string;
  botMicOn: boolean;
  mediaConnected: boolean;
  consentGiven: boolean;
  speaking: Set<string>;
  client: WebSocket | undefined;
  core: WebSocket | undefined;
  notify(): void;
  broadcastState(): void;
  sendClient(message: Record<string, unknown>): void;
  sendCore(message: Record<string, unknown>): void;
}

/** What a platform module answers for a page request: a page, a redirect, or nothing (404). */
export type SimRouteAnswer = { html: string; status?: number; title?: string } | { redirect: string } | null;

/** A platform module: the pages of its web client for one request. */
export type SimRoute = (
  url: URL,
  meetings: ReadonlyMap<string, SimMeetingState>,
  origin: string,
) => SimRouteAnswer;

let counter = 0;

export async function startMeetingSimulator(): Promise<MeetingSimulator> {
  const meetings = new Map<string, SimMeetingState>();
  const audio = new Map<string, string>(); // served name -> file path
  let origin = "";

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", origin);
    const send = (status: number, type: string, body: string | Buffer, headers = {}): void => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...headers }).end(body);
    };
    if (url.pathname.startsWith("/sim/audio/")) {
      const file = audio.get(decodeURIComponent(url.pathname.slice("/sim/audio/".length)));
      if (!file) return send(404, "text/plain", "no such recording");
      return send(200, "audio/wav", readFileSync(file));
    }
    if (url.pathname.startsWith("/sim/core/")) {
      const meeting = meetings.get(url.pathname.slice("/sim/core/".length));
      if (!meeting) return send(404, "text/plain", "no such meeting");
      return send(200, "text/html; charset=utf-8", simCorePage(meeting.id, meeting.platform));
    }
    const route: SimRoute =
      url.pathname.startsWith("/wc") || url.pathname.startsWith("/j/") ? zoomSimRoute : teamsSimRoute;
    const answer = route(url, meetings, origin);
    if (!answer) return send(404, "text/html", "<!doctype html><title>Not Found</title><h1>Not Found</h1>");
    if ("redirect" in answer) return send(302, "text/plain", "", { location: answer.redirect });
    const id = url.searchParams.get("sim") ?? pathMeeting(url.pathname);
    meetings.get(id ?? "")?.loads.push(url.pathname + url.search);
    return send(answer.status ?? 200, "text/html; charset=utf-8", answer.html);
  };

  const server: Server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const meeting = meetings.get(url.searchParams.get("meeting") ?? "");
    const role = url.searchParams.get("role");
    if (url.pathname !== "/sim/ws" || !meeting || (role !== "client" && role !== "core")) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attach(meeting, role, ws));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  function attach(meeting: SimMeetingState, role: "client" | "core", ws: WebSocket): void {
    if (role === "core") {
      meeting.core?.close();
      meeting.core = ws;
      meeting.sendCore({ t: "participants", names: meeting.options.participants });
    } else {
      meeting.client?.close();
      meeting.client = ws;
      meeting.mediaConnected = false;
      meeting.broadcastState();
      for (const m of meeting.chat) meeting.sendClient({ t: "chat", ...m });
    }
    ws.on("message", (data) => {
      let m: SimEvent;
      try {
        m = JSON.parse(String(data)) as SimEvent;
      } catch {
        return;
      }
      if (role === "core") onCore(meeting, m);
      else onClient(meeting, m);
      meeting.notify();
    });
    ws.on("close", () => {
      if (role === "client" && meeting.client === ws) {
        meeting.client = undefined;
        if (meeting.mediaConnected) meeting.sendCore({ t: "disconnect" });
        meeting.mediaConnected = false;
      }
      if (role === "core" && meeting.core === ws) meeting.core = undefined;
      meeting.notify();
    });
  }

  function onClient(meeting: SimMeetingState, m: SimEvent): void {
    meeting.events.push(m);
    switch (m.t) {
      case "join":
        meeting.botName = String(m["name"] ?? "");
        meeting.botMicOn = m["mic"] === true;
        if (meeting.phase === "prejoin") meeting.phase = meeting.options.waitingRoom ? "waiting" : "in_call";
        meeting.broadcastState();
        break;
      case "mic":
        meeting.botMicOn = m["on"] === true;
        break;
      case "consent":
        meeting.consentGiven = true;
        meeting.broadcastState();
        break;
      case "media":
        // The client is ready for audio: the core offers.
        if (meeting.phase === "in_call") meeting.sendCore({ t: "connect" });
        break;
      case "signal":
        meeting.sendCore({ t: "signal", data: m["data"] });
        break;
      case "chat": {
        const text = String(m["text"] ?? "").trim();
        if (text && meeting.phase === "in_call") meeting.say(meeting.botName, text);
        break;
      }
      case "leave":
        if (meeting.phase === "in_call" || meeting.phase === "waiting") meeting.phase = "left";
        meeting.broadcastState();
        break;
    }
  }

  function onCore(meeting: SimMeetingState, m: SimEvent): void {
    switch (m.t) {
      case "signal":
        meeting.sendClient({ t: "signal", data: m["data"] });
        break;
      case "connected":
        meeting.mediaConnected = true;
        break;
      case "level":
        botPeaks.set(meeting.id, Math.max(botPeaks.get(meeting.id) ?? 0, Number(m["rms"]) || 0));
        break;
      case "speaking": {
        const name = String(m["name"] ?? "");
        const on = m["on"] === true;
        // The page's marks follow the audio late, as the live clients' do.
        setTimeout(() => {
          if (on) meeting.speaking.add(name);
          else meeting.speaking.delete(name);
          meeting.sendClient({ t: "speaking", names: [...meeting.speaking] });
        }, meeting.options.markLagMs);
        break;
      }
      case "played":
        played.get(String(m["id"]))?.();
        break;
    }
  }

  const botPeaks = new Map<string, number>();
  const played = new Map<string, () => void>();

  return {
    origin,
    coreUrl: (meeting) => `${origin}/sim/core/${meeting.id}`,
    meeting(platform, options) {
      const id = `${platform === "zoom" ? "8" : "9"}${String(Date.now()).slice(-6)}${String(++counter).padStart(3, "0")}`;
      const waiters = new Set<() => void>();
      const meeting: SimMeetingState = {
        id,
        platform,
        url: platform === "zoom" ? `${origin}/j/${id}?pwd=simpass` : `${origin}/meet/${id}?p=simpass`,
        options: {
          hostStarted: true,
          waitingRoom: true,
          consent: false,
          markLagMs: 300,
          signInRequired: false,
          botWall: false,
          ...options,
          participants: [...options.participants],
        },
        hostStarted: options.hostStarted ?? true,
        phase: "prejoin",
        botName: "",
        botMicOn: false,
        mediaConnected: false,
        consentGiven: false,
        speaking: new Set(),
        events: [],
        chat: [],
        loads: [],
        client: undefined,
        core: undefined,
        notify() {
          for (const w of [...waiters]) w();
        },
        broadcastState() {
          meeting.sendClient({
            t: "state",
            phase: meeting.phase,
            participants: meeting.options.participants,
            consent: meeting.options.consent && !meeting.consentGiven,
            consentGiven: meeting.consentGiven,
            botWall: meeting.options.botWall,
          });
          meeting.notify();
        },
        sendClient(message) {
          if (meeting.client?.readyState === 1) meeting.client.send(JSON.stringify(message));
        },
        sendCore(message) {
          if (meeting.core?.readyState === 1) meeting.core.send(JSON.stringify(message));
        },
        start() {
          meeting.hostStarted = true;
        },
        admit() {
          if (meeting.phase === "waiting") meeting.phase = "in_call";
          meeting.broadcastState();
        },
        deny() {
          if (meeting.phase === "waiting") meeting.phase = "denied";
          meeting.broadcastState();
        },
        remove() {
          meeting.phase = "removed";
          meeting.broadcastState();
        },
        end() {
          meeting.phase = "ended";
          meeting.broadcastState();
        },
        mark(names) {
          meeting.speaking = new Set(names);
          meeting.sendClient({ t: "speaking", names });
        },
        setParticipants(names) {
          meeting.options.participants = [...names];
          meeting.sendCore({ t: "participants", names });
          meeting.broadcastState();
        },
        say(from, text) {
          const message = { from, text, at: new Date().toISOString() };
          meeting.chat.push(message);
          meeting.sendClient({ t: "chat", ...message });
          meeting.notify();
        },
        speak(name, wav) {
          const key = `${id}-${basename(wav)}`;
          audio.set(key, wav);
          const playId = `${key}-${++counter}`;
          return new Promise<void>((resolve, reject) => {
            if (!meeting.core) {
              reject(new Error("the meeting's media core page is not open"));
              return;
            }
            played.set(playId, () => {
              played.delete(playId);
              resolve();
            });
            meeting.sendCore({
              t: "play",
              id: playId,
              name,
              url: `${origin}/sim/audio/${encodeURIComponent(key)}`,
            });
          });
        },
        botPeak: () => botPeaks.get(id) ?? 0,
        resetBotLevel: () => botPeaks.set(id, 0),
        until(done, what, ms = 20_000) {
          if (done()) return Promise.resolve();
          return new Promise<void>((resolve, reject) => {
            const check = (): void => {
              if (!done()) return;
              clearTimeout(timer);
              waiters.delete(check);
              resolve();
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              reject(
                new Error(
                  `waited ${ms} ms for ${what}; events: ${JSON.stringify(meeting.events.slice(-12))}`,
                ),
              );
            }, ms);
            waiters.add(check);
          });
        },
        untrustedInputs: () => meeting.events.filter((e) => e.t === "act" && e.trusted === false),
      };
      meetings.set(id, meeting);
      return meeting;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const m of meetings.values()) {
          m.client?.terminate();
          m.core?.terminate();
        }
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The meeting id in a platform path (`/j/<id>`, `/wc/<id>/join`, `/wc/join/<id>`, `/meet/<id>`). */
function pathMeeting(path: string): string | undefined {
  return /\/(?:j|wc|wc\/join|meet)\/(\d{6,20})/.exec(path)?.[1];
}
