/**
 * Everything the Google Meet driver knows about Meet's pages, in one place:
 * when Meet changes its UI, this is the file to update (and the fixtures
 * under test/fixtures/meet/ with it). Texts are English: the driver pins
 * the locale (`hl=en`, Accept-Language en-US). Matching is by substring,
 * case-insensitive.
 */
export const MEET_SELECTORS = Object.freeze({
  /** Name entry on the pre-join screen (signed-out guests). */
  nameInput: 'input[aria-label="Your name"], input[placeholder="Your name"]',
  /** Toggles that are ON at join: clicking them turns the device off. */
  microphoneOn:
    '[role="button"][aria-label^="Turn off microphone"], button[aria-label^="Turn off microphone"]',
  cameraOn: '[role="button"][aria-label^="Turn off camera"], button[aria-label^="Turn off camera"]',
  /** Buttons whose text asks to join, in order of preference. */
  joinButtonTexts: ["Join now", "Ask to join", "Switch here"],
  /** Present only inside the call. */
  leaveButton: '[aria-label="Leave call"], button[aria-label="Leave call"]',
  /** One element per participant tile or roster entry, with the name in one of the name selectors. */
  participant: "[data-participant-id]",
  participantName: "[data-self-name], .notranslate",
  /** How Meet marks the own tile. */
  selfMarkers: ["(You)", "You"],
});

/** Page texts that decide the phase. Order of checks: fatal, then end, then the waiting-room veto. */
export const MEET_TEXTS = Object.freeze({
  notFound: [
    "Check your meeting code",
    "Invalid video call name",
    "This meeting link is invalid",
    "Meeting not found",
  ],
  signInRequired: ["Sign in to join", "You must sign in", "Sign in with your Google Account to join"],
  blocked: [
    "You can't join this video call",
    "You can't create a meeting yourself",
    "This browser isn't supported",
  ],
  denied: [
    "Someone in the call denied your request",
    "You can't join this call",
    "No one responded to your request",
  ],
  removed: ["You've been removed from the meeting", "Someone has removed you from the meeting"],
  ended: [
    "The call has ended",
    "The meeting has ended",
    "You left the meeting",
    "Everyone has left the call",
  ],
  /** The waiting room: a veto over anything that looks like the call (Meet renders call chrome behind it). */
  waitingRoom: [
    "Asking to be let in",
    "You'll join the call when someone lets you in",
    "Please wait until a meeting host brings you into the call",
  ],
});

/**
 * Meet's in-call chat ("In-call messages" side panel). Not captured from a
 * live meeting (Meet cannot be reached from here): gathered from open meeting
 * bots and extensions that drive Meet's chat, and may drift from the live UI.
 * - attendee-labs/attendee bots/google_meet_bot_adapter/google_meet_chat_sender.js
 *   (2026): composer `textarea[aria-label="Send a message"]`, sent with Enter;
 *   each rendered message carries `data-message-id` and its text as textContent;
 *   a failed post shows "Your message wasn't delivered" with a Resend button.
 * - vivek-nexus/transcriptonic extension/content.js and
 *   extension/content-scripts/google-meet/config.js (2025): the message list is
 *   `div[aria-live="polite"].Ge9Kpc`, rendered only once the panel was opened
 *   (the extension opens and closes it) and kept while it is closed; one
 *   wrapper per run of messages, a sender + time row whose name is absent on
 *   the user's own messages; the toolbar button is the `chat` icon.
 * - Rich-SCC/engagium_v0.2 __documentation/Extension/GOOGLE_MEET_DOM_REFERENCE.md
 *   (Nov 2025): the panel's heading "In-call messages", the textbox and the
 *   (disabled until typed) button both named "Send a message", own messages
 *   with a time and no sender.
 * - TomSteer1/AFKayoko popup.js (older Meet): `aria-label="Send a message to
 *   everyone"` and a `data-tooltip="Send message"` button; older builds also
 *   put `data-sender-name` / `data-timestamp` on each run and
 *   `data-message-text` on each message, kept here as fallbacks.
 * - Recall.ai's chat documentation (mirrored in max-winderbaum/recall-ai-docs
 *   docs/chat-messages.md): 500 characters per Meet chat message.
 */
export const MEET_CHAT = Object.freeze({
  /** The toolbar toggle that opens (and, when open, closes) the chat panel. */
  openButton: 'button[aria-label^="Chat with everyone"], [role="button"][aria-label^="Chat with everyone"]',
  /** The message list; absent until the panel was first opened. */
  messageList:
    'div[aria-live="polite"].Ge9Kpc, [role="list"][aria-label="In-call messages"], [role="list"][aria-label="Chat messages"]',
  /** One element per message, oldest first. */
  message: "[data-message-id], [data-message-text]",
  /** The message's text inside it (else its own text, or its `data-message-text`). */
  messageText: '[jscontroller="RrV5Ic"]',
  messageTextAttribute: "data-message-text",
  /** The run of messages a message belongs to; its sender and time are on the run's first row. */
  run: ".Ss4fHf, [data-sender-name]",
  /** The sender's name in a run; absent on the bot's own runs. Older builds: the run's `data-sender-name`. */
  sender: ".poVWob",
  senderAttribute: "data-sender-name",
  /** The run's shown time ("10:04 AM"); older builds: `data-timestamp` (epoch ms) on the run. */
  time: ".MuzmKe, time",
  timestampAttribute: "data-timestamp",
  /** Names Meet shows for the user's own messages (where it shows one). */
  selfNames: ["You"],
  /** The compose box: a textarea, or a contenteditable under that label in newer builds. */
  input:
    'textarea[aria-label^="Send a message"], [contenteditable="true"][aria-label^="Send a message"], [aria-label^="Send a message"]:not(button) [contenteditable="true"]',
  /** The send button (disabled until something is typed); Enter in the box sends as well. */
  sendButton: 'button[aria-label^="Send a message"], [role="button"][data-tooltip="Send message"]',
  /** Shown on a post Meet failed to deliver. */
  undelivered: "Your message wasn't delivered",
  /** Our own mark on the compose box being typed into (so trusted keystrokes reach the visible one). */
  typingMark: "data-talkgate-compose",
  /** Meet takes up to 500 characters a message. */
  maxChars: 500,
});
