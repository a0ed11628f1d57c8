import { TalkError } from "../../../core/index.js";
import type {
  DeviceToggle,
  DriverPage,
  JoinContext,
  MeetingObservation,
  PlatformDriver,
  ScreenRule,
} from "../platform-driver.js";
import { SCREEN_TEXT_FN } from "../screen-text.js";
import { meetChat } from "./meet-chat.js";
import { MEET_SOURCES_SCRIPT } from "./meet-sources-script.js";
import { MEET_SELECTORS, MEET_TEXTS } from "./meet-selectors.js";

/**
 * Page-side reader: which screen Meet shows, why, and the roster. Order:
 * the address (sign-in), then, outside the call, Meet's own headings and
 * dialogs for refusals and ends; then the waiting room (a veto over call
 * chrome, which the lobby renders too); then a notice to accept; then the
 * call, by signals that exist only inside it; then the pre-join screens.
 * Texts are never read from the chat or captions (MEET_SELECTORS.notScreen).
 */
function observeScript(botName: string): string {
  return `((S, T, botName) => {
  ${SCREEN_TEXT_FN}
  const norm = (s) => (s || "").replace(/[\\u2018\\u2019]/g, "'").replace(/\\s+/g, " ").trim().toLowerCase();
  const find = (text, list) => list.find((t) => text.includes(norm(t)));
  const shown = (el) => el.getClientRects().length > 0;
  const screens = screenText(S.notScreen);
  // The rest of the page, without the chat and captions: lobby texts are plain divs.
  const clone = document.body ? document.body.cloneNode(true) : null;
  // Scripts and styles are not text on the screen (Meet's pages carry megabytes of them).
  if (clone) for (const el of clone.querySelectorAll(S.notScreen + ", script, style, template, noscript")) el.remove();
  const pageText = norm(clone ? clone.textContent : "");
  const dialogs = norm([...document.querySelectorAll('[role="dialog"], [role="alertdialog"], [aria-modal="true"]')].filter(shown).map((d) => d.textContent).join(" | "));
  const out = (screen, reason, participants) => ({ screen, reason, participants: participants || [] });
  if (location.href.startsWith(S.signInUrl)) return out("sign_in", "redirected to " + S.signInUrl);
  // Real tiles: Meet's own effects preview carries a participant id in the lobby too.
  const effects = new RegExp(S.effectsTile, "i");
  const tiles = [...document.querySelectorAll(S.participant)].filter((el) => !effects.test((el.getAttribute("aria-label") || "") + " " + el.textContent));
  const signal = document.querySelector(S.inCallSignals);
  const inCall = tiles.length > 0 || !!signal;
  let hit;
  if (!inCall) {
    if ((hit = find(screens, T.signInRequired))) return out("sign_in", hit);
    if ((hit = find(screens, T.notFound))) return out("not_found", hit);
    if ((hit = find(screens + " " + pageText, T.cantJoin))) return out("cant_join", hit);
    if ((hit = find(screens + " " + pageText, T.denied))) return out("denied", hit);
    if ((hit = find(screens, T.removed))) return out("removed", hit);
    if ((hit = find(screens, T.ended))) return out("ended", hit);
  } else {
    // Over the call, an end is Meet's own dialog, never a line in the chat.
    if ((hit = find(dialogs, T.removed))) return out("removed", "dialog: " + hit);
    if ((hit = find(dialogs, T.ended))) return out("ended", "dialog: " + hit);
  }
  if ((hit = find(pageText, T.waitingRoom))) return out("lobby", hit);
  if ((hit = find(dialogs, T.consent))) return out("consent", "dialog: " + hit);
  if (inCall) {
    const names = new Set();
    for (const el of tiles) {
      const nameEl = el.querySelector(S.participantName);
      const name = ((nameEl && (nameEl.getAttribute("data-self-name") || nameEl.textContent)) || el.getAttribute("aria-label") || "").trim();
      if (!name || name === botName || (nameEl && nameEl.hasAttribute("data-self-name")) || S.selfMarkers.some((m) => name === m || name.endsWith(" " + m))) continue;
      names.add(name);
    }
    return out("in_call", signal ? "in-call control: " + (signal.getAttribute("aria-label") || signal.tagName) : tiles.length + " participant tile(s)", [...names]);
  }
  const buttons = [...document.querySelectorAll('button, [role="button"]')].filter(shown).map((b) => norm(b.innerText || b.textContent));
  if ((hit = S.continueWithoutDevicesTexts.find((t) => buttons.includes(norm(t))))) return out("no_devices", hit);
  const name = document.querySelector(S.nameInput);
  if ((hit = S.joinButtonTexts.find((t) => buttons.includes(norm(t))))) return out("prejoin", "button: " + hit);
  if (name && shown(name)) return out("prejoin", "name field");
  return out("unknown", "no known screen (" + (document.title || location.pathname) + ")");
})(${JSON.stringify(MEET_SELECTORS)}, ${JSON.stringify(MEET_TEXTS)}, ${JSON.stringify(botName)})`;
}

const ATTENDEE = "attendee-labs/attendee bots/google_meet_bot_adapter/google_meet_ui_methods.py";
const VEXA = "Vexa-ai/vexa core/meetings/modules/join/src/googlemeet/selectors.ts, admission.ts";
const SCREENAPP = "screenappai/meeting-bot src/bots/GoogleMeetBot.ts, src/constants/index.ts";
const BAAS = "Meeting-BaaS/meet-teams-bot src/meeting/meet.ts";

/** A Meet device toggle, read and set by its label ("Turn off microphone" is shown while it is on). */
function meetToggle(onSelector: string, offSelector: string): DeviceToggle {
  const read = async (page: DriverPage): Promise<boolean | undefined> => {
    const state = await page.evaluate<string>(
      `document.querySelector(${JSON.stringify(onSelector)}) ? "on" : document.querySelector(${JSON.stringify(offSelector)}) ? "off" : ""`,
    );
    return state === "" ? undefined : state === "on";
  };
  return {
    read,
    async set(page, on) {
      const now = await read(page);
      if (now === undefined || now === on) return false;
      return page.click(on ? offSelector : onSelector);
    },
  };
}

const MICROPHONE = meetToggle(MEET_SELECTORS.microphoneOn, MEET_SELECTORS.microphoneOff);
const CAMERA = meetToggle(MEET_SELECTORS.cameraOn, MEET_SELECTORS.cameraOff);

/** The pre-join screen: the name, the devices as the bot wants them, then the join button (disabled until ready: repeated). */
async function prejoin(page: DriverPage, context: JoinContext): Promise<void> {
  const typed = await page.evaluate<string | null>(
    `(() => { const el = document.querySelector(${JSON.stringify(MEET_SELECTORS.nameInput)}); return el ? el.value : null; })()`,
  );
  if (typed !== null && typed !== context.botName) await page.type(MEET_SELECTORS.nameInput, context.botName);
  await MICROPHONE.set(page, context.wants.microphone);
  await CAMERA.set(page, context.wants.camera);
  await page.clickText(MEET_SELECTORS.joinButtonTexts);
}

/** What each Meet screen means and does, with the reference each fact came from. */
export const MEET_SCREENS: Readonly<Record<string, ScreenRule>> = Object.freeze({
  sign_in: { phase: "sign_in_required", source: `${ATTENDEE}; ${SCREENAPP}` },
  not_found: { phase: "not_found", source: ATTENDEE },
  // Google refusing the browser: retried (attendee: a new browser each time, 5 times at most), then blocked.
  cant_join: { phase: "blocked", retry: { max: 4, waitMs: 1500 }, source: ATTENDEE },
  denied: { phase: "denied", source: `${ATTENDEE}; ${SCREENAPP}; ${VEXA}` },
  removed: { phase: "removed", source: `${SCREENAPP}; ${BAAS}` },
  ended: { phase: "ended", source: `${BAAS}; ${VEXA}` },
  lobby: { phase: "waiting_room", source: `${VEXA}; ${SCREENAPP}; ${ATTENDEE}` },
  consent: {
    phase: "joining",
    source: `${ATTENDEE}; attendee google_meet_chromedriver_payload.js (Gemini); Vexa-ai/vexa PR #1251; Meeting-BaaS/meet-teams-bot PR #105`,
    act: async (page) => {
      await page.clickText(MEET_SELECTORS.consentJoinTexts, {
        within: '[role="dialog"], [role="alertdialog"], [aria-modal="true"]',
      });
    },
  },
  no_devices: {
    phase: "joining",
    source: SCREENAPP,
    act: async (page) => {
      await page.clickText(MEET_SELECTORS.continueWithoutDevicesTexts);
    },
  },
  prejoin: { phase: "joining", source: `${ATTENDEE}; ${VEXA}`, act: prejoin, repeatMs: 2500 },
  in_call: {
    phase: "in_call",
    source: `${BAAS}; ${ATTENDEE}; ${VEXA}`,
    // "Got it" notices over the call (attendee click_others_may_see_your_meeting_differently_button).
    act: async (page) => {
      await page.wake();
      await page.clickText(MEET_SELECTORS.gotItTexts);
    },
    repeatMs: 5000,
  },
});

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
  readonly screens = MEET_SCREENS;
  readonly pageScript = MEET_SOURCES_SCRIPT;
  readonly devices = { microphone: MICROPHONE, camera: CAMERA };
  // A canvas camera "NEEDS to be 30 or Google Meet complains" (attendee-labs/attendee
  // bots/web_bot_adapter/shared_chromedriver_payload.js, captureStream(30)).
  readonly cameraFrameRate = 30;
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

  async observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    const seen = await page.evaluate<{ screen: string; reason: string; participants: string[] }>(
      observeScript(context.botName),
    );
    // Meet forwards remote audio as a few loudest-speaker streams: a track is not a participant, so no
    // track names. Which RTP source (CSRC) is whom travels in Meet's own signalling: the page script
    // (meet-sources-script.ts) reads it from Meet's collections channel, as attendee does.
    if (MEET_SCREENS[seen.screen]?.phase !== "in_call") return { ...seen, speakers: {} };
    const sources = await page.evaluate<Record<string, string>>(
      "window.__talkgateMeetSources ? window.__talkgateMeetSources() : {}",
    );
    return { ...seen, speakers: {}, sources };
  }

  async leave(page: DriverPage): Promise<void> {
    await page.click(MEET_SELECTORS.leaveButton);
  }
}
