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
  const list = document.querySelector(C.messageList);
  if (!list) {
    // Only a closed panel is opened (by the caller, with a real click): the button toggles, and an open
    // panel without a known list must stay open.
    const box = [...document.querySelectorAll(C.input)].find((el) => el.getClientRects().length > 0);
    return box ? [] : null;
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

/** Page-side: is a compose box visible (the panel open), disabled, or is there no chat at all? */
const OPEN_STATE = `((C) => {
  const visible = (el) => el.getClientRects().length > 0;
  const box = [...document.querySelectorAll(C.input)].find(visible);
  if (box) return box.disabled || box.getAttribute("aria-disabled") === "true" ? "disabled" : "open";
  return document.querySelector(C.openButton) ? "closed" : "no_chat";
})(${C})`;

/** Page-side: marks the visible compose box (so trusted keystrokes go to that one). */
const MARK_BOX = `((C) => {
  const box = [...document.querySelectorAll(C.input)].find((el) => el.getClientRects().length > 0);
  if (!box) return false;
  for (const old of document.querySelectorAll("[" + C.typingMark + "]")) old.removeAttribute(C.typingMark);
  box.setAttribute(C.typingMark, "");
  return true;
})(${C})`;

/** Page-side: whether the marked box was emptied (Meet took the message). */
const TAKEN = `((C) => {
  const box = document.querySelector("[" + C.typingMark + "]");
  if (!box) return true;
  return ((box.isContentEditable ? box.textContent : box.value) || "").trim() === "";
})(${C})`;

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
    let raw = await page.evaluate<{ from: string | null; text: string; at: string }[] | null>(readScript());
    if (raw === null) {
      // Meet renders the list once its panel was opened: open the closed panel with a real click, read again.
      await page.click(MEET_CHAT.openButton);
      raw =
        (await page.evaluate<{ from: string | null; text: string; at: string }[] | null>(readScript())) ?? [];
    }
    return raw.map(({ from, text, at }) => {
      // No run around the message: a layout not known here; its sender is unknown, never the bot.
      if (from === null) return { from: "unknown", text, at, self: false };
      const self = from === "" || from === context.botName || MEET_CHAT.selfNames.includes(from);
      return { from: self ? context.botName : from, text, at, self };
    });
  },

  async send(page: DriverPage, text: string): Promise<void> {
    let opened = await page.evaluate<string>(OPEN_STATE);
    if (opened === "closed") {
      await page.click(MEET_CHAT.openButton);
      opened = String(await poll(page, OPEN_STATE, (s) => s !== "closed", OPEN_POLLS));
    }
    if (opened === "no_chat" || opened === "closed")
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
    if (!(await page.evaluate<boolean>(MARK_BOX)) || !(await page.type(`[${MEET_CHAT.typingMark}]`, text)))
      throw new TalkError("invalid_state", "Meet's chat compose box went away before typing", {
        details: { reason: "chat_unavailable" },
      });
    // A trusted Enter, as a person sends; Meet empties the box once it took the message.
    await page.press("Enter");
    if (await poll(page, TAKEN, (v) => v === true, TAKEN_POLLS)) return;
    // Enter did not send (a build that sends only with the button): the send button, once.
    await page.click(MEET_CHAT.sendButton);
    if (await poll(page, TAKEN, (v) => v === true, TAKEN_POLLS)) return;
    throw new TalkError("invalid_state", "Meet did not take the chat message (the compose box kept it)", {
      details: { reason: "not_taken" },
    });
  },
});
