import type { DomPlatformSpec } from "../dom-platform.js";

/**
 * Everything the Zoom web client driver knows about Zoom's pages, in one
 * place: when Zoom changes its UI, this is the file to update (and the
 * fixtures under test/fixtures/zoom/ with it). Built from public sources
 * (Zoom's web client help pages and open-source bots' selectors), not from a
 * live capture: Zoom cannot be reached from the development machines, and
 * these may drift from the live client. English texts; the join URL asks for
 * English (`lang=en-US`).
 */
export const ZOOM_SPEC: DomPlatformSpec = Object.freeze({
  // zoom.us/j/<id> landing page: the desktop-app prompt, then the browser link.
  launcherTexts: ["Join from Your Browser", "Join from browser", "join from your browser"],
  nameInput: "#input-for-name, input[placeholder='Your Name'], input[aria-label='Your Name']",
  // Pre-join preview: these labels mean the device is on; clicking turns it off.
  devicesOn: [
    "#preview-audio-control-button[aria-label='Mute']",
    "#preview-video-control-button[aria-label='Stop Video']",
  ],
  computerAudioTexts: ["Join Audio by Computer", "Join with Computer Audio"],
  joinButton: "button.preview-join-button",
  joinButtonTexts: ["Join"],
  leaveButton: "button.footer__leave-btn, button[aria-label='Leave']",
  leaveConfirmTexts: ["Leave Meeting", "Leave meeting"],
  participant: ".participants-item__item-layout, .participants-li",
  participantName: ".participants-item__display-name",
  selfMarkers: ["(Me)", "(me)"],
  // The speaker view's active tile, and roster entries whose audio icon shows speech.
  speaking:
    ".speaker-active-container__video-frame, .participants-li:has(.participants-item__audio-icon--speaking)",
  texts: {
    notFound: ["This meeting link is invalid", "Meeting does not exist", "Invalid meeting ID"],
    signInRequired: [
      "This meeting is for authorized attendees only",
      "Sign in to join this meeting",
      "only signed-in users can join",
    ],
    blocked: [
      "Passcode wrong",
      "Incorrect passcode",
      "Your browser is not supported",
      "The meeting host has disabled join from browser",
    ],
    denied: ["The host has declined your request to join", "You cannot join this meeting"],
    removed: ["You have been removed from this meeting", "You've been removed from this meeting"],
    ended: ["This meeting has been ended by host", "The meeting has been ended", "This meeting has ended"],
    waitingRoom: [
      "Please wait, the meeting host will let you in soon",
      "Host has joined. We've let them know you're here",
      "Waiting for the host to start this meeting",
    ],
  },
  chat: {
    message: ".chat-message__container, .new-chat-message__container",
    sender: ".chat-item__sender, .chat-message__sender",
    text: ".chat-message__text-content, .new-chat-message__text-content",
    time: ".chat-item__chat-info-time-stamp, time",
    input: ".chat-box__chat-textarea, textarea[aria-label^='Type message']",
    sendButton: "button.chat-box__send-button",
    openButton: "button[aria-label^='open the chat panel'], button[aria-label='Chat']",
    // Zoom's in-meeting chat takes up to 1,024 characters a message.
    maxChars: 1024,
  },
});
