import type { ChatMessage, DriverPage, JoinContext, MeetingChat } from "./platform-driver.js";

/** Where a web client's chat lives: its panel's messages and its compose box (CSS selectors). */
export interface WebChatSpec {
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
  /** How the client marks the bot's own name ("(Me)", "(You)"). */
  selfMarkers: readonly string[];
}

/**
 * The chat of a web meeting client (Zoom, Teams): messages read from the
 * panel (a run of messages keeps its sender), posts typed with real keys in
 * the compose box and sent with its button or Enter. The panel is opened by
 * the driver's in-call act; a closed panel reads as no messages.
 */
export function webChat(spec: WebChatSpec): MeetingChat {
  return {
    maxChars: spec.maxChars,
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
})(${JSON.stringify(spec)})`);
      return raw.map((m) => ({
        ...m,
        self: m.from === context.botName || spec.selfMarkers.some((s) => m.from.endsWith(s)),
      }));
    },
    async send(page: DriverPage, text: string): Promise<void> {
      // Real input only: open the panel, type into the box, send with its button or Enter.
      const hasBox = (): Promise<boolean> =>
        page.evaluate<boolean>(`!!document.querySelector(${JSON.stringify(spec.input)})`);
      if (!(await hasBox())) await page.click(spec.openButton);
      for (let i = 0; i < 20 && !(await hasBox()); i++) await new Promise((r) => setTimeout(r, 100));
      if (!(await page.type(spec.input, text))) throw new Error("the chat compose box is not on the page");
      if (!(await page.click(spec.sendButton))) await page.press("Enter");
    },
  };
}
