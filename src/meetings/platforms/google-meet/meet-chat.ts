import { TalkError } from "../../../core/index.js";
import type { ChatMessage, DriverPage, JoinContext, MeetingChat } from "../platform-driver.js";
import { MEET_CHAT } from "./meet-selectors.js";

/** How long a send waits for the panel to open, and for Meet to take the text after Enter and again after Send (polls of 100 ms). */
const OPEN_POLLS = 30;
const TAKEN_POLLS = 10;

const C = JSON.stringify(MEET_CHAT);

/**
 * Page-side reader. Meet renders the message list only once the panel was
 * opened (and keeps it while closed), so a page without it gets the panel
 * opened once. Own messages are the runs without a sender row ("You" on
 * older builds); a post Meet failed to deliver is left out (the meeting did
 * not see it).
 */
function readScript(): string {
  return `((C) => {
  let list = document.querySelector(C.messageList);
  if (!list) {
    // Only a closed panel is opened: the button toggles, and an open panel without a known list must stay open.
    const open = document.querySelector(C.openButton);
    const box = [...document.querySelectorAll(C.input)].find((el) => el.getClientRects().length > 0);
    if (open && !box) open.click();
    list = document.querySelector(C.messageList);
    if (!list) return [];
  }
  // Attendee's check: the failure note sits in a wrapper around this one message only.
  const undelivered = (m) => {
    for (let el = m; el && el !== list && el.querySelectorAll(C.message).length <= 1; el = el.parentElement)
      if ((el.textContent || "").includes(C.undelivered)) return true;
    return false;
  };
  const out = [];
  for (const m of list.querySelectorAll(C.message)) {
    const t = m.querySelector(C.messageText);
    const text = (m.getAttribute(C.messageTextAttribute) || (t ? t.textContent : m.textContent) || "").replace(/\\s+/g, " ").trim();
    if (!text) continue;
    const run = m.closest(C.run);
    let from = null;
    let at = "";
    if (run) {
      const s = run.querySelector(C.sender);
      from = ((s && s.textContent) || run.getAttribute(C.senderAttribute) || "").trim();
      const ms = Number(run.getAttribute(C.timestampAttribute));
      const time = run.querySelector(C.time);
      if (ms > 0) at = new Date(ms).toISOString();
      else if (time) at = (time.getAttribute("datetime") || time.textContent || "").trim();
    }
    if (from === "" && undelivered(m)) continue;
    out.push({ from, text, at });
  }
  return out;
})(${C})`;
}

/** Page-side: is a compose box visible (the panel open)? Opens the panel when it is not. */
function openScript(click: boolean): string {
  return `((C, click) => {
  const visible = (el) => el.getClientRects().length > 0;
  const box = [...document.querySelectorAll(C.input)].find(visible);
  if (box) return box.disabled || box.getAttribute("aria-disabled") === "true" ? "disabled" : "open";
  const open = document.querySelector(C.openButton);
  if (!open) return "no_chat";
  if (click) open.click();
  return "opening";
})(${C}, ${String(click)})`;
}

/** Page-side: puts the text into the visible compose box (as typed: value and an input event) and marks the box. */
function fillScript(text: string): string {
  return `((C, text) => {
  const box = [...document.querySelectorAll(C.input)].find((el) => el.getClientRects().length > 0);
  if (!box) return false;
  for (const old of document.querySelectorAll("[" + C.typingMark + "]")) old.removeAttribute(C.typingMark);
  box.setAttribute(C.typingMark, "");
  box.focus();
  if (box.isContentEditable) box.textContent = text;
  else Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), "value").set.call(box, text);
  box.dispatchEvent(new InputEvent("input", { bubbles: true, data: text, inputType: "insertText" }));
  return true;
})(${C}, ${JSON.stringify(text)})`;
}

/** Page-side: whether the marked box was emptied (Meet took the message); clicks Send when `click`. */
function takenScript(click: boolean): string {
  return `((C, click) => {
  const box = document.querySelector("[" + C.typingMark + "]");
  if (!box) return true;
  const left = (box.isContentEditable ? box.textContent : box.value) || "";
  if (left.trim() === "") return true;
  if (click) {
    const send = [...document.querySelectorAll(C.sendButton)].find((el) => el.getClientRects().length > 0);
    if (send && !send.disabled && send.getAttribute("aria-disabled") !== "true") send.click();
  }
  return false;
})(${C}, ${String(click)})`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function poll(page: DriverPage, script: string, done: (v: string | boolean) => boolean, n: number) {
  let last: string | boolean = false;
  for (let i = 0; i < n; i++) {
    last = await page.evaluate<string | boolean>(script);
    if (done(last)) return last;
    await sleep(100);
  }
  return last;
}

/**
 * Google Meet's in-call chat: messages read from the "In-call messages"
 * panel (opened when its list is not on the page), posts typed into its
 * compose box and sent with a real Enter key press (the send button as a
 * fallback), confirmed by Meet emptying the box.
 */
export const meetChat: MeetingChat = Object.freeze({
  maxChars: MEET_CHAT.maxChars,

  async read(page: DriverPage, context: JoinContext): Promise<ChatMessage[]> {
    const raw = await page.evaluate<{ from: string | null; text: string; at: string }[]>(readScript());
    return raw.map(({ from, text, at }) => {
      // No run around the message: a layout not known here; its sender is unknown, never the bot.
      if (from === null) return { from: "unknown", text, at, self: false };
      const self = from === "" || from === context.botName || MEET_CHAT.selfNames.includes(from);
      return { from: self ? context.botName : from, text, at, self };
    });
  },

  async send(page: DriverPage, text: string): Promise<void> {
    const state = await page.evaluate<string>(openScript(true));
    const opened =
      state === "opening" ? await poll(page, openScript(false), (s) => s !== "opening", OPEN_POLLS) : state;
    if (opened === "no_chat" || opened === "opening")
      throw new TalkError(
        "invalid_state",
        "Meet's chat panel could not be opened (no compose box on the page)",
        {
          details: { reason: "chat_unavailable" },
        },
      );
    if (opened === "disabled")
      throw new TalkError(
        "invalid_state",
        "Meet's chat is turned off for participants (the compose box is disabled)",
        {
          details: { reason: "chat_disabled" },
        },
      );
    if (!(await page.evaluate<boolean>(fillScript(text))))
      throw new TalkError("invalid_state", "Meet's chat compose box went away before typing", {
        details: { reason: "chat_unavailable" },
      });
    // A trusted Enter, as a person sends; Meet empties the box once it took the message.
    await page.type(`[${MEET_CHAT.typingMark}]`, "\n");
    if (await poll(page, takenScript(false), (v) => v === true, TAKEN_POLLS)) return;
    // Enter did not send (a build that sends only with the button): the send button, once.
    if (await page.evaluate<boolean>(takenScript(true))) return;
    if (await poll(page, takenScript(false), (v) => v === true, TAKEN_POLLS)) return;
    throw new TalkError("invalid_state", "Meet did not take the chat message (the compose box kept it)", {
      details: { reason: "not_taken" },
    });
  },
});
