/**
 * Everything the Google Meet driver knows about Meet's pages, in one place:
 * when Meet changes its UI, this is the file to update (and the fixtures
 * under test/fixtures/meet/ with it). Texts are English: the driver pins
 * the locale (`hl=en`, Accept-Language en-US). Matching is by substring,
 * case-insensitive.
 */
export const MEET_SELECTORS = Object.freeze({
  /** Name entry on the pre-join screen (signed-out guests). attendee google_meet_ui_methods.py. */
  nameInput:
    'input[type="text"][aria-label="Your name"], input[aria-label="Your name"], input[placeholder="Your name"]',
  /**
   * Device toggles, read by their labels: "Turn off microphone" is shown
   * while it is ON. attendee google_meet_ui_methods.py (turn_off_media_inputs),
   * Meeting-BaaS src/meeting/meet.ts.
   */
  microphoneOn: '[aria-label^="Turn off microphone"]',
  microphoneOff: '[aria-label^="Turn on microphone"]',
  cameraOn: '[aria-label^="Turn off camera"]',
  cameraOff: '[aria-label^="Turn on camera"]',
  /**
   * Buttons that ask to join, in order of preference (attendee
   * google_meet_ui_methods.py join_now_button_selector; "Switch here":
   * Vexa googlemeet/selectors.ts googleAuthJoinCtaSelectors).
   */
  joinButtonTexts: [
    "Join now",
    "Ask to join",
    "Ask to join anyway",
    "Join the call now",
    "Join anyway",
    "Join here too",
    "Switch here",
  ],
  /** Meet's device warning before the pre-join screen (screenappai src/bots/GoogleMeetBot.ts). */
  continueWithoutDevicesTexts: ["Continue without microphone and camera"],
  /** Shown in the lobby too (Vexa googlemeet/selectors.ts): leaving only, never a sign of admission. */
  leaveButton: 'button[aria-label="Leave call"], [role="button"][aria-label="Leave call"]',
  /**
   * Signals that exist only inside the call: the call-controls region
   * (Meeting-BaaS src/meeting/meet.ts isInMeeting), the captions button
   * (attendee click_captions_button), Share screen / Present now (Vexa
   * googleInitialAdmissionIndicators). Participant tiles count too, below.
   */
  inCallSignals:
    'div[role="region"][aria-label="Call controls"], button[aria-label="Turn on captions"], button[aria-label="Turn off captions"], button[aria-label*="Share screen"], button[aria-label*="Present now"]',
  /** One element per participant tile, the name in one of the name selectors (Vexa googleParticipantSelectors, googleNameSelectors). */
  participant: "[data-participant-id]",
  participantName: "[data-self-name], span.notranslate, .notranslate",
  /** Meet gives its own effects preview a participant id too, in the lobby as well (Vexa admission.ts countRealParticipantTiles). */
  effectsTile: /visual_effects|backgrounds and effects/i.source,
  /** How Meet marks the own tile. */
  selfMarkers: ["(You)", "You"],
  /** Where the chat and captions live: never read for screen texts (a message "the meeting has ended" ends nothing). */
  notScreen:
    '[role="complementary"], [aria-label="Side panel"], [aria-label="In-call messages"], div[aria-live="polite"].Ge9Kpc, [data-message-id], [aria-label="Captions"], .a4cQT',
  /** A sign-in page (screenappai GoogleMeetBot.ts: the redirect to accounts.google.com). */
  signInUrl: "https://accounts.google.com/",
  /** "Got it" notices over the call ("Others may see your meeting differently": attendee; Meeting-BaaS machine.ts). */
  gotItTexts: ["Got it"],
  /**
   * The recording / transcript / Gemini notes notice: its "Join now" (attendee
   * click_this_meeting_is_being_recorded_join_now_button; the Gemini one's
   * button[data-mdc-dialog-action="ok"]), never its Leave.
   */
  consentJoinTexts: ["Join now", "Join", "Continue"],
});

/**
 * Page texts that decide screens, matched as substrings, case-insensitive,
 * typographic apostrophes (’) read as ' on both sides (Meet's live copy
 * uses them: Vexa googlemeet/selectors.ts). End and refusal texts are read
 * from Meet's own headings and dialogs only (screen-text.ts), never from
 * the chat.
 */
export const MEET_TEXTS = Object.freeze({
  /** attendee check_if_meeting_is_found (the last uses ’ as Meet does). */
  notFound: [
    "Check your meeting code",
    "Invalid video call name",
    "Your meeting code has expired",
    "The meeting code you entered doesn’t work",
    "Meeting not found",
  ],
  /** attendee look_for_login_required_element (a "Sign in" heading over "your Google Account"). */
  signInRequired: [
    "Sign in to join",
    "You must sign in",
    "Sign in with your Google Account",
    "to continue to Google Meet",
  ],
  /**
   * Google refusing this browser: retried (attendee look_for_blocked_element:
   * UiGoogleBlockingUsException, retried with a new browser up to 5 times,
   * then BLOCKED_BY_PLATFORM_REPEATEDLY).
   */
  cantJoin: ["You can’t join this video call", "There is a problem connecting to this video call"],
  /**
   * The waiting room gave up or refused (attendee look_for_denied_your_request_element,
   * screenappai constants GOOGLE_REQUEST_DENIED / GOOGLE_REQUEST_TIMEOUT;
   * Vexa EXPLICIT_HOST_DENIAL_COPY).
   */
  denied: [
    "Someone in the call denied your request to join",
    "No one responded to your request to join the call",
    "You can’t join this call",
    "weren’t allowed to join",
    "request to join was denied",
  ],
  /** screenappai GoogleMeetBot.ts; Meeting-BaaS meet.ts ("You've been removed"). */
  removed: ["You’ve been removed from the meeting", "Someone has removed you from the meeting"],
  /** Meeting-BaaS meet.ts findEndMeeting ("The call ended"); Vexa googleRemovalIndicators ("Meeting ended", "Call ended"). */
  ended: [
    "The call ended",
    "The call has ended",
    "The meeting has ended",
    "Meeting ended",
    "Call ended",
    "You left the meeting",
    "Everyone has left the call",
  ],
  /**
   * The waiting room: a veto over call chrome behind it (Vexa
   * googleWaitingRoomIndicators, the live copy with ’; screenappai
   * GOOGLE_LOBBY_MODE_HOST_TEXT; attendee wait_for_host_if_needed).
   */
  waitingRoom: [
    "Asking to be let in",
    "You’ll join the call when someone lets you in",
    "Please wait until a meeting host brings you into the call",
    "Waiting for the host to let you in",
    "You’re in the waiting room",
    "Waiting for the host to join",
  ],
  /**
   * A notice to accept before taking part: the recording / transcript notice
   * (attendee: "If the meeting you're about to join is being recorded, gmeet
   * makes you click an additional button after you're admitted"), and the
   * same notice when the host's Gemini takes notes: a dialog "Gemini is
   * taking notes" with Leave / Join now, which holds the call's media until
   * Join now and whose dismissal gets the bot refused (attendee
   * google_meet_chromedriver_payload.js checkNeededInteractions; Vexa-ai/vexa
   * PR #1251, seen live; Meeting-BaaS/meet-teams-bot PR #105). Read from
   * dialogs only: the "Gemini is taking notes" pill stays on the call's page
   * while notes run (Vexa googlemeet/selectors.ts).
   */
  consent: [
    "This call is being recorded",
    "This meeting is being recorded",
    "is being recorded",
    "is being transcribed",
    "Gemini is taking notes",
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
