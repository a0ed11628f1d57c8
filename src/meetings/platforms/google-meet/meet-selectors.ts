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
