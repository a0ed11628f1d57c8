import {
  UNKNOWN_SCREEN,
  type ChatMessage,
  type DriverPage,
  type MeetingObservation,
  type MeetingChat,
  type PlatformDriver,
  type ScreenRule,
} from "./platform-driver.js";

/** The room relays at most this many characters per message (test-room-registry.ts). */
const TEST_ROOM_CHAT_CHARS = 2000;

/** The test room's chat panel through its automation API (`window.testRoom.chatLog()` / `sendChat()`). */
const testRoomChat: MeetingChat = {
  maxChars: TEST_ROOM_CHAT_CHARS,
  async read(page, context): Promise<ChatMessage[]> {
    const log = await page.evaluate<unknown>("window.testRoom ? window.testRoom.chatLog() : []");
    if (!Array.isArray(log)) return [];
    const out: ChatMessage[] = [];
    for (const m of log as Record<string, unknown>[]) {
      if (typeof m?.["from"] !== "string" || typeof m["text"] !== "string" || typeof m["at"] !== "string")
        continue;
      out.push({ from: m["from"], text: m["text"], at: m["at"], self: m["from"] === context.botName });
    }
    return out;
  },
  async send(page, text): Promise<void> {
    const sent = await page.evaluate<boolean>(
      `window.testRoom ? window.testRoom.sendChat(${JSON.stringify(text)}) : false`,
    );
    if (!sent) throw new Error("the test room did not take the chat message (not in the call)");
  },
};

/**
 * Reads the test room's DOM contract (test-room-page.ts): state, roster, the
 * tile whose audio plays each remote track, and the SSRCs each tile's
 * participant announced in its session description; with `marks=on` in the
 * room's address, also the tiles the page marks as speaking (the room's
 * active-speaker marks, as Zoom and Teams have them: attribution tests and
 * the attribution bench).
 */
const OBSERVE_SCRIPT = `(() => {
  const state = document.body ? document.body.dataset.state || "" : "";
  const participants = [...document.querySelectorAll("#roster li:not([data-self])")].map((li) => li.dataset.name || "");
  const speakers = {};
  const sources = {};
  const marks = new URLSearchParams(location.search).get("marks") === "on";
  const activeSpeakers = marks ? [...document.querySelectorAll(".tile[data-speaking]:not([data-self])")].map((t) => t.dataset.name || "") : null;
  for (const tile of document.querySelectorAll(".tile[data-name]:not([data-self])")) {
    const audio = tile.querySelector("audio");
    const stream = audio && audio.srcObject;
    if (stream && typeof stream.getAudioTracks === "function") {
      for (const track of stream.getAudioTracks()) speakers[track.id] = tile.dataset.name;
    }
    for (const ssrc of (tile.dataset.ssrcs || "").split(" ")) if (/^[0-9]+$/.test(ssrc)) sources[ssrc] = tile.dataset.name;
  }
  return { state, participants, speakers, sources, activeSpeakers };
})()`;

/** The room's `body[data-state]` values, as screens (test-room-page.ts sets them). */
const SOURCE = "src/meetings/test-room/test-room-page.ts (body[data-state])";
const TEST_ROOM_SCREENS: Readonly<Record<string, ScreenRule>> = Object.freeze({
  connecting: { phase: "joining", source: SOURCE },
  in_call: { phase: "in_call", source: SOURCE },
  ended: { phase: "ended", source: SOURCE },
  // We left, or the room's server went away: either way the meeting is over for the bot.
  left: { phase: "ended", source: SOURCE },
  disconnected: { phase: "ended", source: SOURCE },
});

export interface TestRoomDriverOptions {
  /**
   * The origins this server is reached at (its loopback base URL, its
   * `server.publicUrl`), read when a request comes: the test room is this
   * server's own page, never a path on another host.
   */
  origins(): readonly string[];
}

/**
 * The local test meeting served by talkgate at /meetings/test-room/<room>:
 * registered only when `meetings.testRoom.enabled`, and only for this
 * server's own origins (issue 38: a path match alone sent the bot's browser
 * to any host and port).
 */
export class TestRoomDriver implements PlatformDriver {
  readonly platform = "test-room";
  readonly chat = testRoomChat;
  readonly screens = TEST_ROOM_SCREENS;
  readonly #origins: () => readonly string[];

  constructor(options: TestRoomDriverOptions) {
    this.#origins = options.origins;
  }

  matches(url: URL): boolean {
    return this.#origins().includes(url.origin) && /^\/meetings\/test-room\/[^/]+\/?$/.test(url.pathname);
  }

  joinUrl(url: URL, botName: string): string {
    const out = new URL(url);
    out.searchParams.set("name", botName);
    return out.toString();
  }

  async observe(page: DriverPage): Promise<MeetingObservation> {
    const seen = await page.evaluate<{
      state: string;
      participants: string[];
      speakers: Record<string, string>;
      sources: Record<string, string>;
      activeSpeakers: string[] | null;
    }>(OBSERVE_SCRIPT);
    const screen = Object.hasOwn(TEST_ROOM_SCREENS, seen.state) ? seen.state : UNKNOWN_SCREEN;
    return {
      screen,
      reason: `data-state=${seen.state}`,
      participants: screen === "in_call" ? seen.participants : [],
      speakers: seen.speakers,
      sources: seen.sources,
      ...(seen.activeSpeakers ? { activeSpeakers: seen.activeSpeakers } : {}),
    };
  }

  /** The room's caption strip: every participant's page shows the bot's captions (test-room-page.ts). */
  async postCaption(page: DriverPage, caption: { speaker: string; text: string }): Promise<void> {
    await page.evaluate(
      `window.testRoom && window.testRoom.showCaption(${JSON.stringify(caption.speaker)}, ${JSON.stringify(caption.text)})`,
    );
  }

  async leave(page: DriverPage): Promise<void> {
    await page.evaluate("window.testRoom && window.testRoom.leave()");
  }
}
