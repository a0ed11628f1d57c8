import type { DomPlatformSpec } from "../dom-platform.js";

/**
 * Everything the Microsoft Teams web driver knows about Teams' pages, for an
 * anonymous guest, in one place: when Teams changes its UI, this is the file
 * to update (and the fixtures under test/fixtures/teams/ with it). Built from
 * public sources (Microsoft's "join a meeting without an account" help and
 * open-source bots' `data-tid` selectors), not from a live capture: Teams
 * cannot be reached from the development machines, and these may drift from
 * the live client. English texts.
 */
export const TEAMS_SPEC: DomPlatformSpec = Object.freeze({
  // The launcher page: open the desktop app, or continue in the browser.
  launcherTexts: ["Continue on this browser", "Join on the web instead", "Use the web app instead"],
  nameInput: "input[data-tid='prejoin-display-name-input'], input[placeholder='Type your name']",
  // Pre-join toggles are switches: checked means on.
  devicesOn: [
    "[data-tid='toggle-mute'][aria-checked='true']",
    "[data-tid='toggle-video'][aria-checked='true']",
  ],
  computerAudioTexts: [],
  joinButton: "button[data-tid='prejoin-join-button']",
  joinButtonTexts: ["Join now"],
  leaveButton: "#hangup-button, button[data-tid='hangup-main-btn'], button[aria-label='Leave']",
  leaveConfirmTexts: [],
  participant: "[data-tid^='participantsInCall-']",
  participantName: "[data-tid='roster-participant-name'], span[title]",
  selfMarkers: ["(You)", "(Guest) (You)"],
  // Tiles outline the voice level while someone speaks.
  speaking:
    "[data-stream-type] [data-tid='voice-level-stream-outline'].speaking, [data-tid^='participantsInCall-'][data-is-speaking='true']",
  texts: {
    notFound: ["This meeting doesn't exist", "We couldn't find this meeting", "This link is invalid"],
    signInRequired: [
      "Sign in to join this meeting",
      "Only people with an account can join",
      "You need to sign in",
    ],
    blocked: ["This browser isn't supported", "Anonymous users can't join this meeting"],
    denied: ["Sorry, but you were denied access to the meeting", "Your request to join was declined"],
    removed: ["You've been removed from this meeting", "Someone removed you from the meeting"],
    ended: ["The meeting has ended", "This meeting has ended", "You left the meeting"],
    waitingRoom: [
      "Someone in the meeting should let you in soon",
      "We've let people in the meeting know you're waiting",
      "When the meeting starts, we'll let people in",
    ],
  },
  chat: {
    message: "[data-tid='chat-pane-message']",
    sender: "[data-tid='message-author-name']",
    text: "[id^='content-'], [data-tid='chat-pane-message-body']",
    time: "time",
    input: "[data-tid='ckeditor'], div[role='textbox'][contenteditable='true']",
    sendButton: "button[data-tid='newMessageCommands-send']",
    openButton: "button#chat-button, button[data-tid='chat-button']",
    // Teams messages are limited to about 28 KB; a meeting bot keeps its posts far shorter.
    maxChars: 4000,
  },
});
