import { TalkError } from "../../../core/index.js";
import type {
  DriverPage,
  JoinContext,
  MeetingObservation,
  MeetingPhase,
  PlatformDriver,
} from "../platform-driver.js";
import { meetChat } from "./meet-chat.js";
import { MEET_SELECTORS, MEET_TEXTS } from "./meet-selectors.js";

/** Page-side classifier (a string: no bundler helpers in the page). Returns the phase and the roster. */
function observeScript(botName: string): string {
  return `((S, T, botName) => {
  const text = (document.body ? document.body.innerText : "").toLowerCase();
  const has = (list) => list.find((t) => text.includes(t.toLowerCase()));
  const verdicts = [["not_found", T.notFound], ["sign_in_required", T.signInRequired], ["denied", T.denied], ["blocked", T.blocked], ["removed", T.removed], ["ended", T.ended], ["waiting_room", T.waitingRoom]];
  for (const [phase, list] of verdicts) {
    const hit = has(list);
    if (hit) return { phase, participants: [], detail: hit };
  }
  if (!document.querySelector(S.leaveButton)) return { phase: "joining", participants: [], detail: "no call controls yet" };
  const names = new Set();
  for (const el of document.querySelectorAll(S.participant)) {
    const nameEl = el.querySelector(S.participantName);
    const name = ((nameEl && (nameEl.getAttribute("data-self-name") || nameEl.textContent)) || el.getAttribute("aria-label") || "").trim();
    if (!name || name === botName || S.selfMarkers.some((m) => name === m || name.endsWith(" " + m))) continue;
    names.add(name);
  }
  return { phase: "in_call", participants: [...names], detail: "call controls present" };
})(${JSON.stringify(MEET_SELECTORS)}, ${JSON.stringify(MEET_TEXTS)}, ${JSON.stringify(botName)})`;
}

function clickJoinScript(): string {
  return `((texts) => {
  const buttons = [...document.querySelectorAll('button, [role="button"]')];
  for (const t of texts) {
    const b = buttons.find((el) => (el.textContent || "").trim().toLowerCase() === t.toLowerCase());
    if (b) { b.click(); return t; }
  }
  return null;
})(${JSON.stringify(MEET_SELECTORS.joinButtonTexts)})`;
}

/** A Meet meeting address: a meeting code (abc-defg-hij) or a Workspace nickname lookup. */
const MEET_PATH = /^\/(?:[a-z]{3}-[a-z]{4}-[a-z]{3}|lookup\/[a-z0-9_-]{1,100})\/?$/i;

export interface GoogleMeetDriverOptions {
  /**
   * Tests and development only: origins (`http://127.0.0.1:8080`) whose
   * pages the driver treats as Meet, any path, so a bot can run against a
   * local server of saved Meet pages. Real Meet is only
   * `https://meet.google.com/<code>`; this adds to it, never loosens it.
   */
  testOrigins?: readonly string[];
}

/** Whether `value` is exactly an http(s) origin: scheme, host and port, nothing else. */
export function isHttpOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * Google Meet in a signed-out browser: locale pinned, name entry, microphone
 * and camera off, "Join now" / "Ask to join", then admission read from the
 * page (waiting room veto, call controls, denial and removal texts); the
 * in-call chat read and written in its panel (meet-chat.ts).
 * Meet cannot be reached from the test machines; the driver is tested against
 * saved page fixtures (test/fixtures/meet/).
 */
export class GoogleMeetDriver implements PlatformDriver {
  readonly platform = "google-meet";
  readonly chat = meetChat;
  readonly #testOrigins: ReadonlySet<string>;

  constructor(options: GoogleMeetDriverOptions = {}) {
    const origins = options.testOrigins ?? [];
    const bad = origins.find((o) => !isHttpOrigin(o));
    if (bad !== undefined)
      throw new TalkError(
        "config_invalid",
        `meetings.googleMeet.testOrigins: ${JSON.stringify(bad)} is not an origin such as http://127.0.0.1:8080 (scheme, host, port; no path or trailing slash)`,
      );
    this.#testOrigins = new Set(origins);
  }

  matches(url: URL): boolean {
    if (this.#testOrigins.has(url.origin)) return true;
    return (
      url.protocol === "https:" &&
      url.hostname === "meet.google.com" &&
      url.port === "" &&
      MEET_PATH.test(url.pathname)
    );
  }

  joinUrl(url: URL, _botName: string): string {
    const out = new URL(url);
    out.searchParams.set("hl", "en");
    return out.toString();
  }

  async join(page: DriverPage, context: JoinContext): Promise<void> {
    // The pre-join screen renders after the page's scripts: wait for the join button, bounded by the bot's join timer.
    for (let i = 0; ; i++) {
      context.signal.throwIfAborted();
      const ready = await page.evaluate<boolean>(
        `!!document.querySelector(${JSON.stringify(MEET_SELECTORS.nameInput)}) || [...document.querySelectorAll('button, [role="button"]')].some((b) => ${JSON.stringify(MEET_SELECTORS.joinButtonTexts.map((t) => t.toLowerCase()))}.includes((b.textContent || "").trim().toLowerCase()))`,
      );
      if (ready) break;
      if (i >= 100) return; // observe() reports what the page shows instead (not found, sign-in...)
      await new Promise((r) => setTimeout(r, 200));
    }
    if (
      await page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(MEET_SELECTORS.nameInput)})`)
    ) {
      await page.type(MEET_SELECTORS.nameInput, context.botName);
    }
    // Devices off before joining: the bot's microphone is gated anyway, but a hot mic icon alarms people.
    for (const selector of [MEET_SELECTORS.microphoneOn, MEET_SELECTORS.cameraOn]) {
      if (await page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(selector)})`))
        await page.click(selector);
    }
    await page.evaluate<string | null>(clickJoinScript());
  }

  async observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    const seen = await page.evaluate<{ phase: MeetingPhase; participants: string[]; detail: string }>(
      observeScript(context.botName),
    );
    // Meet forwards remote audio as a few loudest-speaker streams: a track is not a participant, so no
    // track names. Which RTP source (CSRC) is whom travels in Meet's own signalling, not in its DOM; it has
    // not been studied (Meet cannot be reached from here), so no `sources` either: every caption is
    // "unknown" rather than a guess. A driver that learns the table returns it here as `sources`.
    return { ...seen, speakers: {} };
  }

  async leave(page: DriverPage): Promise<void> {
    if (
      await page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(MEET_SELECTORS.leaveButton)})`)
    ) {
      await page.click(MEET_SELECTORS.leaveButton);
    }
  }
}
