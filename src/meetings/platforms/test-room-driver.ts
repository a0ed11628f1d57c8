import type {
  DriverPage,
  JoinContext,
  MeetingObservation,
  MeetingPhase,
  PlatformDriver,
} from "./platform-driver.js";

/**
 * Reads the test room's DOM contract (test-room-page.ts): state, roster, the
 * tile whose audio plays each remote track, and the SSRCs each tile's
 * participant announced in its session description.
 */
const OBSERVE_SCRIPT = `(() => {
  const state = document.body ? document.body.dataset.state || "" : "";
  const participants = [...document.querySelectorAll("#roster li:not([data-self])")].map((li) => li.dataset.name || "");
  const speakers = {};
  const sources = {};
  for (const tile of document.querySelectorAll(".tile[data-name]")) {
    const audio = tile.querySelector("audio");
    const stream = audio && audio.srcObject;
    if (stream && typeof stream.getAudioTracks === "function") {
      for (const track of stream.getAudioTracks()) speakers[track.id] = tile.dataset.name;
    }
    for (const ssrc of (tile.dataset.ssrcs || "").split(" ")) if (/^[0-9]+$/.test(ssrc)) sources[ssrc] = tile.dataset.name;
  }
  return { state, participants, speakers, sources };
})()`;

const PHASES: Record<string, MeetingPhase> = {
  connecting: "joining",
  in_call: "in_call",
  ended: "ended",
  // We left, or the room's server went away: either way the meeting is over for the bot.
  left: "ended",
  disconnected: "ended",
};

/** The local test meeting served by talkgate at /meetings/test-room/<room>. */
export class TestRoomDriver implements PlatformDriver {
  readonly platform = "test-room";

  matches(url: URL): boolean {
    return /^\/meetings\/test-room\/[^/]+\/?$/.test(url.pathname);
  }

  joinUrl(url: URL, botName: string): string {
    const out = new URL(url);
    out.searchParams.set("name", botName);
    return out.toString();
  }

  async join(_page: DriverPage, _context: JoinContext): Promise<void> {
    // The room page joins by itself once loaded.
  }

  async observe(page: DriverPage): Promise<MeetingObservation> {
    const seen = await page.evaluate<{
      state: string;
      participants: string[];
      speakers: Record<string, string>;
      sources: Record<string, string>;
    }>(OBSERVE_SCRIPT);
    const phase = PHASES[seen.state] ?? "joining";
    return {
      phase,
      participants: phase === "in_call" ? seen.participants : [],
      speakers: seen.speakers,
      sources: seen.sources,
      detail: `data-state=${seen.state}`,
    };
  }

  async leave(page: DriverPage): Promise<void> {
    await page.evaluate("window.testRoom && window.testRoom.leave()");
  }
}
