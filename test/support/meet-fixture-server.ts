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
 * - The test moves it on: `in-call` (roster), `alone`, `denied`, `removed`,
 *   `ended`.
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
  set(state: MeetFixtureState): void;
}

export interface MeetFixtureServer {
  /** `http://127.0.0.1:<port>`: what goes into meetings.googleMeet.testOrigins. */
  readonly origin: string;
  /** A new meeting at `<origin>/<code>`, on its pre-join page. */
  meeting(code: string): MeetFixtureMeeting;
  close(): Promise<void>;
}

/** Polls the meeting's state and swaps the body when it changes; reports "Ask to join". */
const SCENARIO_SCRIPT = `<script>
(() => {
  const base = "/" + location.pathname.split("/")[1];
  let shown = "prejoin";
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
      const { state } = await (await fetch(base + "/state")).json();
      if (state === shown) return;
      shown = state;
      const html = await (await fetch(base + "/view/" + state)).text();
      const doc = new DOMParser().parseFromString(html, "text/html");
      document.body.replaceWith(document.adoptNode(doc.body));
    } catch {}
  }, 150);
})();
</script>`;

export async function startMeetFixtureServer(): Promise<MeetFixtureServer> {
  const meetings = new Map<string, MeetFixtureMeeting & { state: MeetFixtureState }>();
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
      return send(200, "application/json", JSON.stringify({ state: meeting.state }));
    if (req.method === "GET" && action === "view" && arg && Object.hasOwn(MEET_FIXTURE_STATES, arg))
      return send(200, "text/html; charset=utf-8", fixture(arg as MeetFixtureState));
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
        set(state: MeetFixtureState) {
          meeting.state = state;
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
