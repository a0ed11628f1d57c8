import type {
  DeviceToggle,
  DriverPage,
  JoinContext,
  MeetingObservation,
  PlatformDriver,
  ScreenRule,
} from "../platform-driver.js";
import { testOriginsOf } from "../test-origins.js";
import { webChat } from "../web-chat.js";
import { ZOOM_SELECTORS as S, ZOOM_SOURCES as SRC, ZOOM_TEXTS as T } from "./zoom-selectors.js";

/** A Zoom host: zoom.us or a vanity / regional subdomain (us05web.zoom.us, acme.zoom.us). */
const ZOOM_HOST = /^(?:[a-z0-9-]+\.)?zoom\.us$/;
/** Invite links (`/j/<id>`) and the web client's own join pages (`/wc/join/<id>`, `/wc/<id>/join`) (Vexa join.ts, screenapp). */
const ZOOM_PATH = /^\/(?:j\/(\d{9,11})|wc\/join\/(\d{9,11})|wc\/(\d{9,11})\/join)\/?$/;
const TEST_PATH = /^\/(?:j\/(\d{6,20})|wc\/join\/(\d{6,20})|wc\/(\d{6,20})\/join)\/?$/;

export interface ZoomDriverOptions {
  /** Tests and development only: origins whose pages the driver treats as Zoom's web client, any path. */
  testOrigins?: readonly string[];
  /**
   * "Host has not started" (error 3,001): reload after this long, at most
   * `maxReloads` times, then end `host_not_started`. Vexa reloads every 15 s
   * for up to 10 minutes. Defaults 15 000 ms, 40.
   */
  hostNotStarted?: { reloadMs?: number; maxReloads?: number };
}

/**
 * Page-side reader: which screen Zoom shows and why, the roster and the
 * active speaker. Order: outside the call, the full-page screens (host not
 * started, not found, bot wall, sign-in, passcode); Zoom's own dialogs over
 * the call (end, removal, consent, computer audio), never the chat or its
 * notifications; the call by signals only the call has (the footer's
 * participants and audio controls, the speaker view) — ranked above lobby
 * text (Vexa #967); the waiting room; the pre-join steps (cookie banner,
 * permission dialog, passcode, name and Join).
 */
function observeScript(botName: string): string {
  return `((S, T, botName) => {
  const norm = (s) => (s || "").replace(/[\\u2018\\u2019]/g, "'").replace(/\\s+/g, " ").trim().toLowerCase();
  const find = (text, list) => list.find((t) => text.includes(t));
  const shown = (el) => !!el && el.getClientRects().length > 0;
  const out = (screen, reason, extra) => Object.assign({ screen, reason, participants: [] }, extra || {});
  const clone = document.body ? document.body.cloneNode(true) : null;
  // Scripts and styles are not text on the screen (a single-page app's scripts carry every screen's strings).
  if (clone) for (const el of clone.querySelectorAll(S.notScreen + ", script, style, noscript, template")) el.remove();
  const pageText = norm(clone ? clone.textContent : "");
  const dialogs = [...document.querySelectorAll(S.modal)].filter(shown);
  const dialogText = norm(dialogs.map((d) => d.textContent).join(" | "));
  const titles = norm([...document.querySelectorAll(S.modalTitle)].filter(shown).map((d) => d.textContent).join(" | "));
  const inCall = !!document.querySelector(S.inCall);
  let hit;
  // Zoom's end and removal dialogs, over the call or after it (the call's chrome stays behind them).
  if (document.querySelector(S.endedLabel)) return out("ended", "dialog " + S.endedLabel);
  if ((hit = find(titles + " | " + dialogText, T.removed))) return out("removed", "dialog: " + hit);
  if ((hit = find(titles + " | " + dialogText, T.ended))) return out("ended", "dialog: " + hit);
  if ((hit = find(titles + " | " + dialogText, T.denied))) return out("denied", "dialog: " + hit);
  if (!inCall) {
    const title = document.title || "";
    if ((hit = find(pageText, T.hostNotStarted))) return out("host_not_started", "page: " + hit + (title ? " (title " + title + ")" : ""));
    if ((hit = find(pageText, T.botWall))) return out("bot_wall", "page: " + hit);
    if (document.querySelector(S.captchaFrame) && !document.querySelector(S.joinButton + ":not(.disabled):not([disabled])"))
      return out("bot_wall", "reCAPTCHA frame");
    if ((hit = find(pageText, T.captcha))) return out("bot_wall", "page: " + hit);
    if ((hit = find(pageText, T.notFound))) return out("not_found", "page: " + hit);
    if ((hit = find(pageText, T.signIn))) return out("sign_in", "page: " + hit);
    if ((hit = find(pageText, T.passcodeWrong))) return out("passcode_wrong", "page: " + hit);
    if ((hit = find(pageText, T.browserRefused))) return out("browser_refused", "page: " + hit);
    if ((hit = find(pageText, T.networkError))) return out("network_error", "page: " + hit);
  }
  if (inCall) {
    // Roster: the panel's rows while it is open (kept in the page for when it is not), and the footer's counter.
    let names = null;
    const panel = document.querySelector(S.participantsPanel);
    if (shown(panel)) {
      names = [];
      for (const row of document.querySelectorAll(S.participantRow)) {
        const name = ((row.querySelector(S.participantName) || {}).textContent || "").trim();
        const label = norm((row.querySelector(S.participantLabel) || {}).textContent);
        if (!name || name === botName || T.selfMarkers.some((m) => label.includes(m))) continue;
        if (!names.includes(name)) names.push(name);
      }
      window.__talkgateRoster = names;
    } else if (Array.isArray(window.__talkgateRoster)) names = window.__talkgateRoster;
    const counter = document.querySelector(S.participantsCounter);
    const total = counter ? parseInt(counter.textContent, 10) : NaN;
    const others = Number.isFinite(total) ? Math.max(0, total - 1) : undefined;
    const speakers = [];
    for (const el of document.querySelectorAll(S.activeSpeaker)) {
      const name = ((el.querySelector("span") || el).textContent || "").replace(/\\s+/g, " ").trim();
      if (name && name !== botName && !speakers.includes(name)) speakers.push(name);
    }
    const extra = { participants: names || [], activeSpeakers: speakers };
    if (others !== undefined) extra.participantCount = others;
    if ((hit = find(dialogText, T.consent))) return out("consent", "dialog: " + hit, extra);
    const audioDialog = dialogs.find((d) => T.computerAudioTexts.some((t) => norm(d.textContent).includes(norm(t))));
    if (audioDialog) return out("join_audio", "dialog: computer audio", extra);
    return out("in_call", "in-call control " + S.inCall.split(",").find((sel) => document.querySelector(sel.trim())).trim(), extra);
  }
  if ((hit = find(pageText, T.waitingRoom))) return out("waiting_room", "page: " + hit);
  if (shown(document.querySelector(S.cookieAccept)) || shown(document.querySelector(S.cookieReject)))
    return out("cookies", "cookie banner " + S.cookieAccept);
  const buttons = [...document.querySelectorAll('button, [role="button"], a')].filter(shown);
  const label = (b) => norm(b.innerText || b.textContent || b.getAttribute("aria-label"));
  if (dialogs.some((d) => norm(d.textContent).includes(norm(S.permissionDismissTexts[0]))))
    return out("permissions", "dialog: " + S.permissionDismissTexts[0]);
  if (shown(document.querySelector(S.passcodeInput)) && !shown(document.querySelector(S.nameInput))) return out("passcode", "passcode field");
  if (shown(document.querySelector(S.nameInput)) || shown(document.querySelector(S.joinButton))) return out("prejoin", "name field / Join");
  if ((hit = S.launcherTexts.find((t) => buttons.some((b) => label(b) === norm(t))))) return out("landing", "link: " + hit);
  return out("unknown", "no known screen (" + (document.title || location.pathname) + ")");
})(${JSON.stringify(S)}, ${JSON.stringify(T)}, ${JSON.stringify(botName)})`;
}

/** A toggle read from an element's aria-label: `on` / `off` labels (exact, case-insensitive). */
function labelToggle(selector: string, onLabel: string, offLabel: string): DeviceToggle {
  const read = async (page: DriverPage): Promise<boolean | undefined> => {
    const label = await page.evaluate<string>(
      `(() => { const el = document.querySelector(${JSON.stringify(selector)}); return el ? (el.getAttribute("aria-label") || "").trim().toLowerCase() : ""; })()`,
    );
    if (label === onLabel.toLowerCase()) return true;
    if (label === offLabel.toLowerCase()) return false;
    return undefined;
  };
  return {
    read,
    async set(page, on) {
      const now = await read(page);
      if (now === undefined || now === on) return false;
      // The footer hides without pointer movement (Vexa #966): show it, then click.
      await page.wake();
      return page.click(selector);
    },
  };
}

/** In the call: the footer's audio control ("mute my microphone" while it is on) and video control. */
const MICROPHONE = labelToggle(S.audioButton, T.micOnLabel, T.micOffLabel);
const CAMERA = labelToggle(S.videoButton, T.videoOnLabel, T.videoOffLabel);
/** Before joining: the preview's toggles ("Mute" while the microphone is on, "Stop Video" while the camera is; Vexa). */
const PREVIEW_MICROPHONE = labelToggle(S.previewMic, "Mute", "Unmute");
const PREVIEW_CAMERA = labelToggle(S.previewVideo, "Stop Video", "Start Video");

/** The pre-join card: the name typed with real keys (Join stays disabled otherwise; Vexa), the devices as wanted, Join. */
async function prejoin(page: DriverPage, context: JoinContext): Promise<void> {
  const typed = await page.evaluate<string | null>(
    `(() => { const el = document.querySelector(${JSON.stringify(S.nameInput)}); return el ? el.value : null; })()`,
  );
  if (typed !== null && typed.trim() !== context.botName) await page.type(S.nameInput, context.botName);
  // A voice agent keeps its microphone on in the preview so Zoom joins it with audio (Vexa join.ts); a transcriber mutes it.
  await PREVIEW_MICROPHONE.set(page, context.wants.microphone);
  await PREVIEW_CAMERA.set(page, context.wants.camera);
  // Disabled until Zoom has validated the typed name: the act repeats while the screen stays.
  await page.click(`${S.joinButton.split(",")[0]!.trim()}:not(.disabled), #joinBtn`);
}

/** A passcode field: the meeting link's `pwd`, typed; without one the bot cannot get in (Vexa join.ts). */
async function passcode(page: DriverPage): Promise<void> {
  const pwd = new URL(page.url()).searchParams.get("pwd");
  if (pwd) {
    await page.type(S.passcodeInput, pwd);
    await page.press("Enter");
  }
}

/** In the call: computer audio joined elsewhere; here the participants and chat panels kept open, notices dismissed. */
async function inCall(page: DriverPage): Promise<void> {
  await page.wake();
  const open = await page.evaluate<{ participants: boolean; chat: boolean }>(
    `({ participants: !!document.querySelector(${JSON.stringify(S.participantsPanel)}), chat: !!document.querySelector(${JSON.stringify(S.chatInput)}) })`,
  );
  // The roster exists only in the participants panel (screenapp counts the footer; names need the panel).
  if (!open.participants) await page.click(S.participantsButton);
  // Zoom's chat list exists only while its panel is open (Vexa zoom-chat.ts).
  if (!open.chat) await page.click(S.chatOpenButton);
}

const hostWaitMs = (o?: ZoomDriverOptions["hostNotStarted"]): number => o?.reloadMs ?? 15_000;
const hostReloads = (o?: ZoomDriverOptions["hostNotStarted"]): number => o?.maxReloads ?? 40;

/** What each Zoom screen means and does, with the references each fact came from. */
function zoomScreens(options: ZoomDriverOptions): Readonly<Record<string, ScreenRule>> {
  return Object.freeze({
    host_not_started: {
      phase: "waiting_room",
      subCode: "host_not_started",
      retry: { max: hostReloads(options.hostNotStarted), waitMs: hostWaitMs(options.hostNotStarted) },
      source: `${SRC.vexaJoin} (wait 15 s and reload, 10 minutes); ${SRC.attendee}`,
    },
    not_found: { phase: "not_found", source: `${SRC.vexaJoin}; saved pages` },
    // Keyed to the meeting's account, not the address (Vexa); Meeting-BaaS retries it once more, bounded.
    bot_wall: {
      phase: "blocked",
      retry: { max: 1, waitMs: 3000 },
      source: `${SRC.vexaAdmission}; ${SRC.baas}; ${SRC.attendee}`,
    },
    sign_in: { phase: "sign_in_required", source: `${SRC.vexaJoin}; ${SRC.attendee}` },
    passcode_wrong: { phase: "blocked", source: SRC.attendee },
    browser_refused: { phase: "blocked", source: "saved pages (Zoom's help pages)" },
    // attendee retries this generic join error.
    network_error: { phase: "joining", retry: { max: 2, waitMs: 3000 }, source: SRC.attendee },
    landing: {
      phase: "joining",
      source: SRC.screenapp,
      act: async (page) => {
        await page.clickText(S.launcherTexts);
      },
    },
    cookies: {
      phase: "joining",
      source: `${SRC.vexaJoin}; ${SRC.screenapp}`,
      act: async (page) => {
        if (!(await page.click(S.cookieAccept))) await page.click(S.cookieReject);
      },
      repeatMs: 1000,
    },
    // Allow, twice: without it Zoom never joins the meeting's audio, nothing is heard (Vexa join.ts).
    permissions: {
      phase: "joining",
      source: SRC.vexaJoin,
      act: async (page) => {
        await page.clickText(S.allowTexts, { within: S.modal });
      },
      repeatMs: 1000,
    },
    passcode: { phase: "joining", source: SRC.vexaJoin, act: passcode, repeatMs: 5000 },
    prejoin: { phase: "joining", source: SRC.vexaJoin, act: prejoin, repeatMs: 1500 },
    waiting_room: { phase: "waiting_room", source: SRC.vexaAdmission },
    consent: {
      phase: "in_call",
      source: `${SRC.vexaAudio}; ${SRC.baas}`,
      act: async (page) => {
        if (!(await page.click(S.disclaimerAgree)))
          await page.clickText(T.consentAcceptTexts, { within: S.modal });
      },
      repeatMs: 1500,
    },
    join_audio: {
      phase: "in_call",
      source: `${SRC.vexaAudio}; ${SRC.attendee} (audio joined = in the meeting)`,
      act: async (page) => {
        await page.clickText(T.computerAudioTexts, { within: S.modal });
      },
      repeatMs: 1500,
    },
    in_call: {
      phase: "in_call",
      source: `${SRC.vexaAdmission}; ${SRC.screenapp}; ${SRC.premid}`,
      act: inCall,
      repeatMs: 5000,
    },
    removed: { phase: "removed", source: `${SRC.vexaLeave}; ${SRC.screenapp}` },
    ended: { phase: "ended", source: `${SRC.vexaLeave}; ${SRC.screenapp}` },
    denied: { phase: "denied", source: `${SRC.attendee} (KICK_OUT_FROM_WAITING_ROOM; wording unverified)` },
  });
}

/**
 * Zoom's web client for a guest: invite links go straight to
 * `app.zoom.us/wc/<id>/join` (the passcode kept; Vexa), then the screens
 * above, one join state machine (bot/screen-machine.ts). Tested end to end
 * against the simulator in test/support/meeting-sim/ (facts from the
 * maintained bots, not captured from the live client: they may drift).
 */
export class ZoomDriver implements PlatformDriver {
  readonly platform = "zoom";
  readonly chat = webChat({
    message: S.chatMessage,
    sender: S.chatSender,
    text: S.chatText,
    time: S.chatTime,
    input: S.chatInput,
    sendButton: S.chatSendButton,
    openButton: S.chatOpenButton,
    maxChars: S.chatMaxChars,
    selfMarkers: ["(Me)"],
  });
  readonly screens: Readonly<Record<string, ScreenRule>>;
  readonly devices = { microphone: MICROPHONE, camera: CAMERA };
  readonly #testOrigins: ReadonlySet<string>;

  constructor(options: ZoomDriverOptions = {}) {
    this.#testOrigins = testOriginsOf("meetings.zoom.testOrigins", options.testOrigins);
    this.screens = zoomScreens(options);
  }

  matches(url: URL): boolean {
    if (this.#testOrigins.has(url.origin)) return true;
    return (
      url.protocol === "https:" &&
      url.port === "" &&
      ZOOM_HOST.test(url.hostname) &&
      ZOOM_PATH.test(url.pathname)
    );
  }

  /** The React web client directly, `/wc/<id>/join?pwd=` (Vexa buildZoomWebClientUrl); nothing else of the link kept. */
  joinUrl(url: URL, _botName: string): string {
    const test = this.#testOrigins.has(url.origin);
    const m = (test ? TEST_PATH : ZOOM_PATH).exec(url.pathname);
    if (!m) return url.toString();
    const id = m[1] ?? m[2] ?? m[3]!;
    const out = new URL(`${test ? url.origin : "https://app.zoom.us"}/wc/${id}/join`);
    const pwd = url.searchParams.get("pwd");
    if (pwd) out.searchParams.set("pwd", pwd);
    return out.toString();
  }

  async observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation> {
    const seen = await page.evaluate<MeetingObservation>(observeScript(context.botName));
    // Zoom mixes the meeting into one stream (Vexa zoom-capture README): no track or source names anyone;
    // the active speaker does (`activeSpeakers`).
    return { ...seen, speakers: {} };
  }

  async leave(page: DriverPage): Promise<void> {
    await page.wake();
    if (await page.click(S.leaveButton)) {
      // Never Enter: it cancels the dialog (Vexa leave.ts).
      for (let i = 0; i < 10; i++) {
        if (await page.click(S.leaveConfirm)) return;
        await new Promise((r) => setTimeout(r, 150));
      }
      return;
    }
    await page.click(S.waitingLeave);
  }
}
