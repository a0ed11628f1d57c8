import type { DriverPage, JoinContext, MeetingObservation, PlatformDriver } from "../platform-driver.js";
import { domChat, domPlatformScreens, leaveDomPlatform, observeDomPlatform } from "../dom-platform.js";
import { testOriginsOf } from "../test-origins.js";
import { TEAMS_SPEC } from "./teams-selectors.js";

export interface TeamsDriverOptions {
  /** Tests and development only: origins whose pages the driver treats as Teams, any path. */
  testOrigins?: readonly string[];
}

/** Work / school meeting links and Teams (free) meeting links. */
function isTeamsMeeting(url: URL): boolean {
  if (url.protocol !== "https:" || url.port !== "") return false;
  if (url.hostname === "teams.microsoft.com") return /^\/l\/meetup-join\/[^/]+\/[^/]+/.test(url.pathname);
  if (url.hostname === "teams.live.com") return /^\/meet\/\d{6,20}\/?$/.test(url.pathname);
  return false;
}

/**
 * Microsoft Teams on the web as an anonymous guest: "Continue on this
 * browser", name, microphone and camera off, "Join now", the lobby, then
 * admission, roster, speaking outlines and the end read from the page; chat
 * read and written in the meeting chat. Tested against reduced saved pages
 * (test/fixtures/teams/), which may drift.
 */
export class TeamsDriver implements PlatformDriver {
  readonly platform = "teams";
  readonly chat = domChat(TEAMS_SPEC);
  readonly screens = domPlatformScreens(
    TEAMS_SPEC,
    "test/fixtures/teams (Microsoft's help pages and open bots' data-tid selectors; see teams-selectors.ts)",
  );
  readonly #testOrigins: ReadonlySet<string>;

  constructor(options: TeamsDriverOptions = {}) {
    this.#testOrigins = testOriginsOf("meetings.teams.testOrigins", options.testOrigins);
  }

  matches(url: URL): boolean {
    return this.#testOrigins.has(url.origin) || isTeamsMeeting(url);
  }

  joinUrl(url: URL, _botName: string): string {
    return url.toString();
  }

  observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    return observeDomPlatform(TEAMS_SPEC, page, context);
  }

  leave(page: DriverPage): Promise<void> {
    return leaveDomPlatform(TEAMS_SPEC, page);
  }
}
