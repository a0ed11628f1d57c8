import type {
  DeviceToggle,
  DriverPage,
  JoinContext,
  MeetingObservation,
  PlatformDriver,
  ScreenRule,
} from "../platform-driver.js";
import { SCREEN_TEXT_FN } from "../screen-text.js";
import { testOriginsOf } from "../test-origins.js";
import { webChat } from "../web-chat.js";
import { TEAMS_SELECTORS as S, TEAMS_SOURCES as SRC, TEAMS_TEXTS as T } from "./teams-selectors.js";

export interface TeamsDriverOptions {
  /** Tests and development only: origins whose pages the driver treats as Teams, any path. */
  testOrigins?: readonly string[];
  /** How long the capture waits for Teams' `mainAudio` mix before capturing every track, ms. Default 15 000 (Vexa). */
  mainAudioGraceMs?: number;
}

/** Teams web hosts (Vexa auth-redirect.ts TEAMS_HOST_SUFFIXES; subdomains: Meeting-BaaS teamsUrlParser.test.ts). */
const TEAMS_HOSTS = ["teams.microsoft.com", "teams.live.com", "teams.microsoft.us", "teams.cloud.microsoft"];

/** The meeting link forms Teams hands out (Meeting-BaaS teamsUrlParser.ts; attendee: /meet/<id>?p=). */
function isMeetingPath(url: URL): boolean {
  const p = url.pathname;
  return (
    /^\/l\/meetup-join\/[^/]+\/[^/]+/.test(p) ||
    /^\/meet\/\d{6,20}\/?$/.test(p) ||
    p === "/light-meetings/launch" ||
    p === "/dl/launcher/launcher.html" ||
    (/^\/v2\/?$/.test(p) &&
      url.searchParams.get("meetingjoin") === "true" &&
      url.hash.includes("meetup-join"))
  );
}

/**
 * The web client's own join link for a Teams link, as Meeting-BaaS rewrites
 * them (teamsUrlParser.ts): meetup-join, light-meetings (`coords`, base64
 * JSON) and launcher links become `/v2/?meetingjoin=true#/l/meetup-join/
 * <thread>/<message>?context=…&anon=true`; `/meet/<id>?p=` links (Teams
 * free, and teams.microsoft.com's short links) stay as they are.
 */
export function teamsJoinUrl(url: URL): string {
  const origin = url.origin;
  const v2 = (thread: string, message: string, context: string): string =>
    `${origin}/v2/?meetingjoin=true#/l/meetup-join/${thread}/${message}?context=${context}&anon=true`;
  const meetup = /^\/l\/meetup-join\/([^/]+)\/([^/?#]+)/.exec(url.pathname);
  if (meetup) return v2(meetup[1]!, meetup[2]!, encodeURIComponent(url.searchParams.get("context") ?? "{}"));
  if (url.pathname === "/light-meetings/launch") {
    try {
      const coords = JSON.parse(decodeURIComponent(atob(url.searchParams.get("coords") ?? ""))) as Record<
        string,
        unknown
      >;
      const { conversationId, tenantId, messageId, organizerId } = coords;
      if (typeof conversationId === "string" && typeof tenantId === "string" && messageId !== undefined) {
        const context = { Tid: tenantId, ...(typeof organizerId === "string" ? { Oid: organizerId } : {}) };
        return v2(
          encodeURIComponent(conversationId),
          encodeURIComponent(String(messageId)),
          encodeURIComponent(JSON.stringify(context)),
        );
      }
    } catch {
      // Not a light-meetings link we can read: opened as it is.
    }
    return url.toString();
  }
  if (url.pathname === "/dl/launcher/launcher.html") {
    const inner = /\/l\/meetup-join\/([^/]+)\/([^/?#]+)\?context=([^&]*)/.exec(
      url.searchParams.get("url") ?? "",
    );
    if (inner) return v2(encodeURIComponent(decodeURIComponent(inner[1]!)), inner[2]!, inner[3]!);
  }
  return url.toString();
}

/**
 * Page-side reader. Order: a Microsoft sign-in page (by its host or form);
 * in the call (signals only the call has: More, Raise, People, chat — not
 * hang-up, which the lobby shows too) an end or removal only from a dialog,
 * a recording-consent dialog, else the call with its roster and speaking
 * outlines; outside it, Teams' own screens (headings, dialogs, status
 * regions, and the page without its chat and bubbles) for refusals and
 * ends, the lobby, the no-audio-or-video question, the pre-join, the
 * launcher.
 */
function observeScript(botName: string): string {
  return `((S, T, botName) => {
  ${SCREEN_TEXT_FN}
  const norm = (s) => (s || "").replace(/[\\u2018\\u2019]/g, "'").replace(/\\s+/g, " ").trim().toLowerCase();
  const find = (text, list) => list.find((t) => text.includes(t));
  const shown = (el) => !!el && el.getClientRects().length > 0;
  const out = (screen, reason, extra) => Object.assign({ screen, reason, participants: [] }, extra || {});
  if (S.loginHosts.some((h) => location.hostname === h || location.hostname.endsWith("." + h))) return out("sign_in", "redirected to " + location.hostname);
  if (document.querySelector(S.loginForm)) return out("sign_in", "Microsoft sign-in form");
  const dialogs = norm([...document.querySelectorAll(S.dialog)].filter(shown).filter((d) => !d.closest(S.notScreen)).map((d) => d.textContent).join(" | "));
  const signal = document.querySelector(S.inCall);
  let hit;
  if (signal) {
    if ((hit = find(dialogs, T.removed))) return out("removed", "dialog: " + hit);
    if ((hit = find(dialogs, T.ended))) return out("ended", "dialog: " + hit);
    // Roster: the People pane's rows while it is open (kept in the page for when it is not), and the People count.
    let names = null;
    const pane = document.querySelector(S.peoplePane);
    if (shown(pane)) {
      names = [];
      for (const row of pane.querySelectorAll(S.rosterRow)) {
        const titled = row.querySelector("span[title]");
        const raw = ((titled && titled.getAttribute("title")) || (row.getAttribute("aria-label") || "").split(",")[0] || row.textContent || "").trim();
        const whole = norm(row.textContent + " " + (row.getAttribute("aria-label") || ""));
        if (!raw || raw === botName || T.selfMarkers.some((m) => whole.includes(norm(m)))) continue;
        if (!names.includes(raw)) names.push(raw);
      }
      window.__talkgateRoster = names;
      window.__talkgateRosterAt = Date.now();
    } else if (Array.isArray(window.__talkgateRoster)) names = window.__talkgateRoster;
    const button = document.querySelector(S.rosterButton);
    const n = button ? (button.textContent + " " + (button.getAttribute("aria-label") || "")).match(/\\b(\\d{1,4})\\b/) : null;
    // Active speakers: a stream wrapper names its participant; its voice-level outline lights while they speak.
    const speakers = [];
    for (const outline of document.querySelectorAll(S.voiceOutline)) {
      const wrapper = outline.closest("[data-stream-type][data-tid]");
      const name = wrapper ? (wrapper.getAttribute("data-tid") || "").trim() : "";
      if (!name || name === botName || speakers.includes(name)) continue;
      let lit = outline.classList.contains(S.speakingClass);
      if (!lit) {
        const before = getComputedStyle(outline, "::before");
        const m = (before.borderTopColor || "").match(/\\d+/g);
        lit = Number(before.opacity) === 1 && !!m && Number(m[2]) > 150 && Number(m[2]) > Number(m[0]) + 40;
      }
      if (lit) speakers.push(name);
    }
    const extra = { participants: names || [], activeSpeakers: speakers };
    if (n) extra.participantCount = Math.max(0, Number(n[1]) - 1);
    if ((hit = find(dialogs, T.consent))) return out("consent", "dialog: " + hit, extra);
    return out("in_call", "in-call control #" + (signal.id || signal.getAttribute("data-tid") || signal.tagName), extra);
  }
  const screens = screenText(S.notScreen);
  const clone = document.body ? document.body.cloneNode(true) : null;
  // Scripts and styles are not text on the screen (a single-page app's scripts carry every screen's strings).
  if (clone) for (const el of clone.querySelectorAll(S.notScreen + ", script, style, noscript, template")) el.remove();
  const pageText = norm(clone ? clone.textContent : "");
  if ((hit = find(pageText, T.signIn))) return out("sign_in", "page: " + hit);
  if ((hit = find(pageText, T.notFound))) return out("not_found", "page: " + hit);
  if ((hit = find(pageText, T.captcha))) return out("captcha", "page: " + hit);
  if ((hit = find(pageText, T.cantConnect))) return out("cant_connect", "page: " + hit);
  if ((hit = find(screens, T.denied))) return out("denied", "screen: " + hit);
  if ((hit = find(screens, T.removed))) return out("removed", "screen: " + hit);
  if ((hit = find(screens, T.ended))) return out("ended", "screen: " + hit);
  if ((hit = find(pageText, T.lobby))) return out("lobby", "page: " + hit);
  const buttons = [...document.querySelectorAll('button, [role="button"], a')].filter(shown).flatMap((b) => [norm(b.innerText || b.textContent), norm(b.getAttribute("aria-label"))]);
  const has = (texts) => texts.find((t) => buttons.includes(norm(t)));
  if ((hit = has(T.continueWithoutMediaTexts))) return out("no_av_confirm", "dialog: " + hit);
  if (shown(document.querySelector(S.nameInput)) || shown(document.querySelector(S.joinButton))) return out("prejoin", "name field / Join now");
  if ((hit = find(pageText, T.permissionGate))) return out("permission_gate", "page: " + hit);
  if ((hit = has(S.launcherTexts))) return out("launcher", "button: " + hit);
  return out("unknown", "no known screen (" + (document.title || location.pathname) + ")");
})(${JSON.stringify(S)}, ${JSON.stringify(T)}, ${JSON.stringify(botName)})`;
}

/** A pre-join switch: `aria-checked` (or `checked`) true means on (attendee turn_off_media_inputs). */
function preJoinSwitch(selector: string): DeviceToggle {
  const read = async (page: DriverPage): Promise<boolean | undefined> => {
    const state = await page.evaluate<string>(
      `(() => { const el = document.querySelector(${JSON.stringify(selector)}); if (!el) return ""; const a = el.getAttribute("aria-checked"); return a !== null ? a : String(!!el.checked); })()`,
    );
    return state === "" ? undefined : state === "true";
  };
  return {
    read,
    async set(page, on) {
      const now = await read(page);
      if (now === undefined || now === on) return false;
      return page.click(selector);
    },
  };
}

/** An in-call button read by its label's start ("Mute…" while the microphone is on, "Unmute…" while off). */
function labelPrefixToggle(selector: string, onPrefix: string, offPrefix: string): DeviceToggle {
  const read = async (page: DriverPage): Promise<boolean | undefined> => {
    const label = await page.evaluate<string>(
      `(() => { const el = document.querySelector(${JSON.stringify(selector)}); return el ? (el.getAttribute("aria-label") || el.getAttribute("title") || "").trim().toLowerCase() : ""; })()`,
    );
    if (label.startsWith(offPrefix)) return false;
    if (label.startsWith(onPrefix)) return true;
    return undefined;
  };
  return {
    read,
    async set(page, on) {
      const now = await read(page);
      if (now === undefined || now === on) return false;
      await page.wake();
      return page.click(selector);
    },
  };
}

const MIC_SWITCH = preJoinSwitch(S.micSwitch);
const CAMERA_SWITCH = preJoinSwitch(S.cameraSwitch);
const MICROPHONE = labelPrefixToggle(S.micButton, T.micOnPrefix, T.micOffPrefix);
const CAMERA = labelPrefixToggle(S.cameraButton, T.cameraOnPrefix, T.cameraOffPrefix);

/** Pre-join: the name typed with real keys, the switches as wanted, computer audio, "Join now" (repeated while it stays). */
async function prejoin(page: DriverPage, context: JoinContext): Promise<void> {
  const typed = await page.evaluate<string | null>(
    `(() => { const el = document.querySelector(${JSON.stringify(S.nameInput)}); return el ? el.value : null; })()`,
  );
  if (typed !== null && typed.trim() !== context.botName) await page.type(S.nameInput, context.botName);
  await MIC_SWITCH.set(page, context.wants.microphone);
  await CAMERA_SWITCH.set(page, context.wants.camera);
  // Computer audio, never "Don't use audio" (Vexa join.ts).
  if (
    await page.evaluate<boolean>(
      `(() => { const r = document.querySelector(${JSON.stringify(S.computerAudio)}); return !!r && r.getAttribute("aria-checked") !== "true"; })()`,
    )
  )
    await page.click(S.computerAudio);
  if (!(await page.click(S.joinButton))) await page.clickText(S.joinTexts);
}

/** Roster names older than this are refreshed by opening the People pane (one right pane at a time). */
const ROSTER_REFRESH_MS = 60_000;

/**
 * In the call: Teams shows one right-hand pane at a time, chat or People.
 * The People pane is opened when the names are unknown or stale; once read
 * (observe keeps them in the page), the chat is opened again for the chat
 * reader. The People button's number keeps counting meanwhile.
 */
async function inCall(page: DriverPage): Promise<void> {
  await page.wake();
  const state = await page.evaluate<{ people: boolean; chat: boolean; age: number | null }>(
    `({ people: !!document.querySelector(${JSON.stringify(S.peoplePane)}), chat: !!document.querySelector(${JSON.stringify(S.chatInput)}), age: window.__talkgateRosterAt ? Date.now() - window.__talkgateRosterAt : null })`,
  );
  const stale = state.age === null || state.age > ROSTER_REFRESH_MS;
  if (!state.people && stale) await page.click(S.rosterButton);
  else if (!state.chat && (!stale || state.people)) await page.click(S.chatButton);
}

/** What each Teams screen means and does, with the references each fact came from. */
const TEAMS_SCREENS: Readonly<Record<string, ScreenRule>> = Object.freeze({
  sign_in: { phase: "sign_in_required", source: `${SRC.vexaAuth}; ${SRC.attendee}` },
  not_found: { phase: "not_found", source: SRC.attendee },
  // attendee raises it as a captcha block; retried once, bounded.
  captcha: { phase: "blocked", retry: { max: 1, waitMs: 3000 }, source: SRC.attendee },
  // "We couldn't connect you": attendee retries.
  cant_connect: { phase: "joining", retry: { max: 2, waitMs: 3000 }, source: SRC.attendee },
  denied: { phase: "denied", source: `${SRC.attendee}; ${SRC.baas}` },
  removed: { phase: "removed", source: `${SRC.vexaAdmission}; ${SRC.baas}` },
  ended: { phase: "ended", source: SRC.vexaAdmission },
  lobby: { phase: "waiting_room", source: `${SRC.attendee}; ${SRC.baas}; ${SRC.vexaJoin}` },
  no_av_confirm: {
    phase: "joining",
    source: `${SRC.vexaJoin}; ${SRC.baas}`,
    act: async (page) => {
      await page.clickText(T.continueWithoutMediaTexts);
    },
    repeatMs: 1500,
  },
  permission_gate: { phase: "joining", source: SRC.vexaJoin },
  launcher: {
    phase: "joining",
    source: `${SRC.vexaJoin}; ${SRC.baas}; ${SRC.screenapp}`,
    act: async (page) => {
      await page.clickText(S.launcherTexts);
    },
    repeatMs: 2000,
  },
  prejoin: {
    phase: "joining",
    source: `${SRC.attendee}; ${SRC.screenapp}; ${SRC.vexaJoin}`,
    act: prejoin,
    repeatMs: 2000,
  },
  consent: {
    phase: "in_call",
    source: SRC.consent,
    act: async (page) => {
      await page.clickText(T.consentAcceptTexts, { within: S.dialog });
    },
    repeatMs: 1500,
  },
  in_call: {
    phase: "in_call",
    source: `${SRC.attendee}; ${SRC.baas}; ${SRC.vexaSpeakers}; ${SRC.publicScript}`,
    act: inCall,
    repeatMs: 5000,
  },
});

/**
 * Microsoft Teams on the web as an anonymous guest: links rewritten to the
 * web client's own join link (Meeting-BaaS), then the screens above, one
 * join state machine (bot/screen-machine.ts). Teams sends the meeting as one
 * `mainAudio` mix beside per-speaker copies: only the mix is captured.
 * Tested end to end against the simulator in test/support/meeting-sim/
 * (facts from the maintained bots, not captured from the live client).
 */
export class TeamsDriver implements PlatformDriver {
  readonly platform = "teams";
  readonly chat = webChat({
    message: S.chatMessage,
    sender: S.chatSender,
    text: S.chatText,
    time: S.chatTime,
    input: S.chatInput,
    sendButton: S.chatSendButton,
    openButton: S.chatButton,
    maxChars: S.chatMaxChars,
    selfMarkers: T.selfMarkers,
  });
  readonly screens = TEAMS_SCREENS;
  readonly devices = { microphone: MICROPHONE, camera: CAMERA };
  readonly capture: { preferStream: string; graceMs?: number };
  readonly #testOrigins: ReadonlySet<string>;

  constructor(options: TeamsDriverOptions = {}) {
    this.#testOrigins = testOriginsOf("meetings.teams.testOrigins", options.testOrigins);
    this.capture = {
      preferStream: S.mainAudio,
      ...(options.mainAudioGraceMs !== undefined ? { graceMs: options.mainAudioGraceMs } : {}),
    };
  }

  matches(url: URL): boolean {
    if (this.#testOrigins.has(url.origin)) return true;
    if (url.protocol !== "https:" || url.port !== "") return false;
    const host = url.hostname;
    return TEAMS_HOSTS.some((h) => host === h || host.endsWith(`.${h}`)) && isMeetingPath(url);
  }

  joinUrl(url: URL, _botName: string): string {
    return teamsJoinUrl(url);
  }

  async observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    const seen = await page.evaluate<MeetingObservation>(observeScript(context.botName));
    // The mix names nobody; the speaking outlines do (`activeSpeakers`).
    return { ...seen, speakers: {} };
  }

  async leave(page: DriverPage): Promise<void> {
    await page.wake();
    if (!(await page.click(S.hangup))) await page.click(S.cancelJoin);
  }
}
