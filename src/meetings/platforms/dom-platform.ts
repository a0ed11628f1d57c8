import type {
  ChatMessage,
  DriverPage,
  JoinContext,
  MeetingChat,
  MeetingObservation,
  MeetingPhase,
  ScreenRule,
} from "./platform-driver.js";

/**
 * What a web meeting client's pages look like to a bot, as data: the one file
 * per platform (zoom-selectors.ts, teams-selectors.ts) fills it in, and the
 * page code below reads any platform through it. Texts are matched as
 * case-insensitive substrings of the page's text; selectors are CSS.
 */
export interface DomPlatformSpec {
  /** Buttons or links on landing / launcher pages that lead to the web client ("Join from your browser"). */
  launcherTexts: readonly string[];
  /** The name field of the pre-join screen. */
  nameInput: string;
  /** Elements present while the microphone / camera is ON at pre-join: clicking each turns it off. */
  devicesOn: readonly string[];
  /** Audio choice dialogs ("Join Audio by Computer"): clicked when shown, so the bot's audio reaches the call. */
  computerAudioTexts: readonly string[];
  /** The join button: a selector, or texts of buttons. */
  joinButton: string;
  joinButtonTexts: readonly string[];
  /** Present only inside the call (call controls). */
  leaveButton: string;
  /** A confirmation some clients ask after Leave ("Leave Meeting"). */
  leaveConfirmTexts: readonly string[];
  /** One element per participant in the roster / tiles, the name inside `participantName` (or its text). */
  participant: string;
  participantName: string;
  /** Texts marking the own entry ("(Me)", "(You)"). */
  selfMarkers: readonly string[];
  /** Elements of participants speaking now (the platform's active-speaker marks), their name in `participantName`. */
  speaking: string;
  texts: {
    notFound: readonly string[];
    signInRequired: readonly string[];
    /** Wrong passcode and the like: the bot cannot get in by itself. */
    blocked: readonly string[];
    denied: readonly string[];
    removed: readonly string[];
    ended: readonly string[];
    /** The waiting room / lobby: a veto over call controls rendered behind it. */
    waitingRoom: readonly string[];
  };
  chat: {
    /** One element per message, oldest first. */
    message: string;
    /** The sender inside a message; clients that group messages show it on the first of a run only. */
    sender: string;
    text: string;
    /** The time inside a message, when shown (a `datetime` attribute is preferred to its text). */
    time: string;
    /** The compose box (textarea, input or contenteditable) and its send button (else Enter sends). */
    input: string;
    sendButton: string;
    /** Opens the chat panel when the compose box is not on the page. */
    openButton: string;
    maxChars: number;
  };
}

/** Page-side classifier (a string: no bundler helpers in the page). */
export function observeScript(spec: DomPlatformSpec, botName: string): string {
  return `((S, botName) => {
  const text = (document.body ? document.body.innerText : "").toLowerCase();
  const has = (list) => list.find((t) => text.includes(t.toLowerCase()));
  const T = S.texts;
  const verdicts = [["not_found", T.notFound], ["sign_in_required", T.signInRequired], ["denied", T.denied], ["blocked", T.blocked], ["removed", T.removed], ["ended", T.ended], ["waiting_room", T.waitingRoom]];
  for (const [phase, list] of verdicts) {
    const hit = has(list);
    if (hit) return { phase, participants: [], activeSpeakers: [], detail: hit };
  }
  if (!document.querySelector(S.leaveButton)) return { phase: "joining", participants: [], activeSpeakers: [], detail: "no call controls yet" };
  const nameOf = (el) => {
    const n = el.querySelector(S.participantName);
    return ((n && n.textContent) || el.getAttribute("aria-label") || el.textContent || "").trim();
  };
  const isSelf = (name) => name === botName || S.selfMarkers.some((m) => name.endsWith(m)) ;
  const strip = (name) => { for (const m of S.selfMarkers) if (name.endsWith(m)) return name.slice(0, -m.length).trim(); return name; };
  const names = new Set();
  for (const el of document.querySelectorAll(S.participant)) {
    const name = nameOf(el);
    if (!name || isSelf(name)) continue;
    names.add(name);
  }
  const speaking = new Set();
  for (const el of document.querySelectorAll(S.speaking)) {
    const name = strip(nameOf(el));
    if (name && name !== botName) speaking.add(name);
  }
  return { phase: "in_call", participants: [...names], activeSpeakers: [...speaking], detail: "call controls present" };
})(${JSON.stringify(spec)}, ${JSON.stringify(botName)})`;
}

/**
 * The join flow of a web client: launcher pages ("join from your browser"),
 * name, devices off, computer audio, join button. Each step is retried while
 * the single-page app renders, bounded (then observe() says what the page
 * shows: not found, sign-in, passcode...).
 */
export async function joinDomPlatform(
  spec: DomPlatformSpec,
  page: DriverPage,
  context: JoinContext,
): Promise<void> {
  const q = (selector: string): Promise<boolean> =>
    page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(selector)})`);
  for (let i = 0; i < 150; i++) {
    context.signal.throwIfAborted();
    if (await q(spec.nameInput)) break;
    if (await q(spec.joinButton)) break;
    if (await q(spec.leaveButton)) break; // already past the pre-join screen
    await page.clickText(spec.launcherTexts);
    await new Promise((r) => setTimeout(r, 200));
  }
  if (await q(spec.nameInput)) await page.type(spec.nameInput, context.botName);
  // Devices off before joining: the bot's microphone is gated anyway, but a hot mic icon alarms people.
  for (const selector of spec.devicesOn) {
    if (await q(selector)) await page.click(selector);
  }
  if (!(await page.click(spec.joinButton))) await page.clickText(spec.joinButtonTexts);
  // Audio dialogs appear after the join click on some clients.
  for (let i = 0; i < 10; i++) {
    context.signal.throwIfAborted();
    if (await page.clickText(spec.computerAudioTexts)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The screens of a DOM platform, one per phase its texts decide (the
 * framework's first cut for Zoom and Teams: their own screen tables replace
 * it). The pre-join screen's act is the whole join flow, run once.
 */
export function domPlatformScreens(
  spec: DomPlatformSpec,
  source: string,
): Readonly<Record<string, ScreenRule>> {
  return Object.freeze({
    prejoin: {
      phase: "joining",
      source,
      act: (page: DriverPage, context: JoinContext) => joinDomPlatform(spec, page, context),
      repeatMs: Number.MAX_SAFE_INTEGER,
    },
    waiting_room: { phase: "waiting_room", source },
    in_call: { phase: "in_call", source },
    not_found: { phase: "not_found", source },
    sign_in_required: { phase: "sign_in_required", source },
    denied: { phase: "denied", source },
    blocked: { phase: "blocked", source },
    removed: { phase: "removed", source },
    ended: { phase: "ended", source },
  });
}

export async function observeDomPlatform(
  spec: DomPlatformSpec,
  page: DriverPage,
  context: JoinContext,
): Promise<MeetingObservation & { activeSpeakers: string[] }> {
  const seen = await page.evaluate<{
    phase: MeetingPhase;
    participants: string[];
    activeSpeakers: string[];
    detail: string;
  }>(observeScript(spec, context.botName));
  // Web clients mix or forward remote audio over a few streams: a track is not a participant, so no track
  // names; which RTP source is whom is in their signalling, not studied here, so no `sources` either.
  const { phase, detail, ...rest } = seen;
  return { ...rest, screen: phase === "joining" ? "prejoin" : phase, reason: detail, speakers: {} };
}

export async function leaveDomPlatform(spec: DomPlatformSpec, page: DriverPage): Promise<void> {
  if (!(await page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(spec.leaveButton)})`)))
    return;
  await page.click(spec.leaveButton);
  await page.clickText(spec.leaveConfirmTexts);
}

/** The chat of a DOM platform: messages read from the panel, posts typed in the compose box. */
export function domChat(spec: DomPlatformSpec): MeetingChat {
  const c = spec.chat;
  return {
    maxChars: c.maxChars,
    async read(page: DriverPage, context: JoinContext): Promise<ChatMessage[]> {
      const raw = await page.evaluate<{ from: string; text: string; at: string }[]>(`((C) => {
  const out = [];
  let from = "";
  for (const m of document.querySelectorAll(C.message)) {
    const s = m.querySelector(C.sender);
    if (s && s.textContent.trim()) from = s.textContent.trim();
    const t = m.querySelector(C.text);
    const time = m.querySelector(C.time);
    const text = t ? t.textContent.trim() : "";
    if (text) out.push({ from, text, at: time ? (time.getAttribute("datetime") || time.textContent || "").trim() : "" });
  }
  return out;
})(${JSON.stringify(c)})`);
      return raw.map((m) => ({
        ...m,
        self: m.from === context.botName || spec.selfMarkers.some((s) => m.from.endsWith(s)),
      }));
    },
    async send(page: DriverPage, text: string): Promise<void> {
      // Real input only: open the panel, type into the box, send with its button or Enter.
      const hasBox = (): Promise<boolean> =>
        page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(c.input)})`);
      if (!(await hasBox())) await page.click(c.openButton);
      for (let i = 0; i < 20 && !(await hasBox()); i++) await new Promise((r) => setTimeout(r, 100));
      if (!(await page.type(c.input, text))) throw new Error("the chat compose box is not on the page");
      if (!(await page.click(c.sendButton))) await page.press("Enter");
    },
  };
}
