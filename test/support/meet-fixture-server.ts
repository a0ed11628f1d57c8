/**
 * A stand-in for Google Meet built from the saved, reduced Meet pages in
 * test/fixtures/meet/: an HTTP server on loopback where each meeting code is
 * a small state machine the test drives. Meet is a single-page app, so the
 * page does not navigate between states: it polls its meeting's state and
 * swaps its body for the fixture of the new state, as Meet re-renders.
 *
 * - `GET /<code>`: the pre-join page (name entry, microphone and camera
 *   toggles, "Ask to join"); the request's `hl` and Accept-Language are kept.
 * - Clicking "Ask to join" posts the typed name and the page's log of the
 *   toggles it saw to `POST /<code>/ask`, and the meeting moves to the
 *   waiting room.
 * - The test moves it on: `in-call` (roster, chat panel), `alone`, `denied`,
 *   `removed`, `ended`. A fixture's scripts run when it is shown.
 * - In the call, the page relays the chat: `meeting.say(from, text)` is a
 *   message from someone else shown in the page's chat panel, and what the
 *   page's user (the bot) posts lands in `meeting.posts`.
 * - Unknown codes are 404.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";

const FIXTURES = join(import.meta.dirname, "../fixtures/meet");

/** The fixture each state shows. */
export const MEET_FIXTURE_STATES = {
  prejoin: "prejoin.html",
  "waiting-room": "waiting-room.html",
  "in-call": "in-call.html",
  alone: "alone.html",
  denied: "denied.html",
  removed: "removed.html",
  ended: "ended.html",
} as const;

export type MeetFixtureState = keyof typeof MEET_FIXTURE_STATES;

export interface MeetFixtureAsk {
  /** What was in the name field when "Ask to join" was clicked. */
  name: string;
  /** The pre-join fixture's log of its toggles and buttons (`mic-off`, `camera-off`, `ask:<name>`). */
  log: string[];
}

export interface MeetFixtureMeeting {
  readonly code: string;
  readonly state: MeetFixtureState;
  /** Each "Ask to join". */
  readonly asks: MeetFixtureAsk[];
  /** Each load of the meeting page: its `hl` query and Accept-Language header. */
  readonly loads: { hl: string | null; acceptLanguage: string | undefined }[];
  /** What the page's user posted in the meeting's chat, in order. */
  readonly posts: string[];
  set(state: MeetFixtureState): void;
  /** A chat message from another participant (`time` as Meet shows it, default the fixture's "10:06 AM"). */
  say(from: string, text: string, time?: string): void;
}

export interface MeetFixtureServer {
  /** `http://127.0.0.1:<port>`: what goes into meetings.googleMeet.testOrigins. */
  readonly origin: string;
  /** A new meeting at `<origin>/<code>`, on its pre-join page. */
  meeting(code: string): MeetFixtureMeeting;
  close(): Promise<void>;
}

interface FixtureChat {
  from: string;
  text: string;
  time?: string;
}

/** Polls the meeting's state and swaps the body when it changes; reports "Ask to join". */
const SCENARIO_SCRIPT = `<script>
(() => {
  const base = "/" + location.pathname.split("/")[1];
  let shown = "prejoin";
  let heard = 0;
  let reported = 0;
  document.addEventListener("click", (event) => {
    const button = event.target && event.target.closest && event.target.closest("button");
    if (!button || button.textContent.trim() !== "Ask to join") return;
    const name = document.getElementById("name");
    fetch(base + "/ask", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: name ? name.value : "", log: window.fixtureLog || [] }),
    });
  });
  setInterval(async () => {
    try {
      const { state, chat } = await (await fetch(base + "/state")).json();
      const fixture = window.meetFixture;
      if (fixture && state === shown) {
        for (const m of chat.slice(heard)) fixture.receive(m.from, m.text, m.time);
        heard = chat.length;
        const posts = fixture.posts.slice(reported);
        reported += posts.length;
        if (posts.length) fetch(base + "/posted", { method: "POST", body: JSON.stringify(posts) });
      }
      if (state === shown) return;
      shown = state;
      const html = await (await fetch(base + "/view/" + state)).text();
      const doc = new DOMParser().parseFromString(html, "text/html");
      document.body.replaceWith(document.adoptNode(doc.body));
      // Parsed scripts never run: a fresh copy of each does (the in-call fixture's chat panel).
      for (const old of document.body.querySelectorAll("script")) {
        const script = document.createElement("script");
        script.textContent = old.textContent;
        old.replaceWith(script);
      }
    } catch {}
  }, 150);
})();
</script>`;

export async function startMeetFixtureServer(): Promise<MeetFixtureServer> {
  const meetings = new Map<string, MeetFixtureMeeting & { state: MeetFixtureState; chat: FixtureChat[] }>();
  const fixture = (state: MeetFixtureState): string =>
    readFileSync(join(FIXTURES, MEET_FIXTURE_STATES[state]), "utf8");

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const [, code = "", action, arg] = url.pathname.split("/");
    const meeting = meetings.get(code);
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store" }).end(body);
    };
    if (!meeting) return send(404, "text/html", "<h1>Not Found</h1>");
    if (req.method === "GET" && action === undefined) {
      meeting.loads.push({ hl: url.searchParams.get("hl"), acceptLanguage: req.headers["accept-language"] });
      const page = fixture("prejoin").replace("</body>", `${SCENARIO_SCRIPT}\n</body>`);
      return send(200, "text/html; charset=utf-8", page);
    }
    if (req.method === "GET" && action === "state")
      return send(200, "application/json", JSON.stringify({ state: meeting.state, chat: meeting.chat }));
    if (req.method === "GET" && action === "view" && arg && Object.hasOwn(MEET_FIXTURE_STATES, arg))
      return send(200, "text/html; charset=utf-8", fixture(arg as MeetFixtureState));
    if (req.method === "POST" && action === "posted") {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      meeting.posts.push(...(JSON.parse(body) as unknown[]).map(String));
      return send(204, "text/plain", "");
    }
    if (req.method === "POST" && action === "ask") {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      const ask = JSON.parse(body) as MeetFixtureAsk;
      meeting.asks.push({ name: String(ask.name), log: Array.isArray(ask.log) ? ask.log.map(String) : [] });
      meeting.set("waiting-room");
      return send(204, "text/plain", "");
    }
    return send(404, "text/plain", "no such fixture route");
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
    meeting(code) {
      const meeting = {
        code,
        state: "prejoin" as MeetFixtureState,
        asks: [] as MeetFixtureAsk[],
        loads: [] as { hl: string | null; acceptLanguage: string | undefined }[],
        posts: [] as string[],
        chat: [] as FixtureChat[],
        set(state: MeetFixtureState) {
          meeting.state = state;
        },
        say(from: string, text: string, time?: string) {
          meeting.chat.push({ from, text, ...(time === undefined ? {} : { time }) });
        },
      };
      meetings.set(code, meeting);
      return meeting;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
