/**
 * Everything the Microsoft Teams web driver knows about Teams' pages for an
 * anonymous guest, in one place, each fact with the maintained open bot (or
 * public script) it came from: when Teams changes its UI, this is the file to
 * update, and the simulator (test/support/meeting-sim/teams-sim-page.ts) with
 * it. None was captured from the live client here (it cannot be reached from
 * the development machines); `talkgate meetings probe <teams link>` records
 * what the live client shows. English texts, matched case-insensitively,
 * typographic apostrophes read as '.
 */

/** Where each fact came from (repository + path), cited by the screens table and docs/meetings.md. */
export const TEAMS_SOURCES = {
  attendee: "attendee-labs/attendee bots/teams_bot_adapter/teams_ui_methods.py",
  attendeeAudio: "attendee-labs/attendee bots/teams_bot_adapter/teams_chromedriver_payload.js",
  vexaJoin: "Vexa-ai/vexa core/meetings/modules/join/src/msteams/join.ts, selectors.ts, modals.ts (#467)",
  vexaAdmission: "Vexa-ai/vexa core/meetings/modules/join/src/msteams/admission.ts, removal.ts (#600)",
  vexaAuth: "Vexa-ai/vexa core/meetings/modules/join/src/msteams/auth-redirect.ts",
  vexaSpeakers: "Vexa-ai/vexa core/meetings/modules/teams-capture/src/msteams-speakers.ts",
  vexaAudio: "Vexa-ai/vexa core/meetings/modules/mixed-capture-core/src/teams-main-audio.ts",
  vexaMic: "Vexa-ai/vexa core/meetings/services/bot/src/capture-bridge.ts (createSpeakController)",
  baas: "Meeting-BaaS/meet-teams-bot src/meeting/teams.ts, src/urlParser/teamsUrlParser.ts, chrome_extension/src/observeSpeakers/teams.ts",
  screenapp: "screenappai/meeting-bot src/bots/MicrosoftTeamsBot.ts",
  consent:
    "Azure/communication-ui-library#5068 (Teams' explicit recording consent: unmuting fails until agreed)",
  publicScript:
    "a public Teams meeting-assistant script (#roster-button's number counts everyone; not one of the four bots)",
} as const;

export const TEAMS_SELECTORS = Object.freeze({
  /** Microsoft sign-in hosts: a meeting link bounced there offers no anonymous join (Vexa auth-redirect.ts). */
  loginHosts: [
    "login.microsoftonline.com",
    "login.microsoftonline.us",
    "login.partner.microsoftonline.cn",
    "login.microsoft.com",
    "login.live.com",
    "login.windows.net",
  ],
  /** The Microsoft login form (attendee look_for_microsoft_login_form_element). */
  loginForm: 'input[name="loginfmt"]',
  /** The launcher: continue in the browser (Vexa, Meeting-BaaS; aria-labels: screenapp). */
  launcherTexts: [
    "Continue on this browser",
    "Join meeting from this browser",
    "Join on this browser",
    "Join on the web instead",
    "Use the web app instead",
  ],
  /** Pre-join: name field (attendee, screenapp; placeholder: Meeting-BaaS). */
  nameInput: 'input[data-tid="prejoin-display-name-input"], input[placeholder="Type your name"]',
  /** Switches; `aria-checked="true"` (or `checked`) means on (attendee turn_off_media_inputs, screenapp). */
  micSwitch: '[data-tid="toggle-mute"]',
  cameraSwitch: '[data-tid="toggle-video"]',
  /** "Join now" (attendee: `[data-tid="prejoin-join-button"]`). */
  joinButton: 'button[data-tid="prejoin-join-button"]',
  joinTexts: ["Join now"],
  /** Computer audio / Don't use audio radios (Vexa join.ts). */
  computerAudio: '[role="radio"][aria-label*="Computer audio"]',
  /**
   * Signals that exist only inside the call: More (attendee waits for it after Join now), Raise
   * (Meeting-BaaS: gone = removed), the People and chat buttons (Meeting-BaaS isInTeamsMeeting).
   * Not the hang-up button: the lobby shows it too.
   */
  inCall: "#callingButtons-showMoreBtn, #raisehands-button, #roster-button, #chat-button",
  hangup: '#hangup-button, button[data-tid="hangup-main-btn"], [data-inp="hangup-button"]',
  /** The lobby's cancel (attendee click_cancel_join_button). */
  cancelJoin: '[data-tid="prejoin-cancel-button"]',
  /** Dialogs: ends over the call are read here, never from the chat. */
  dialog: '[role="dialog"], [role="alertdialog"], [aria-modal="true"]',
  /** The microphone in the call: `#microphone-button` (Vexa), its label "Mute…" while on, "Unmute…" while off (wording unverified). */
  micButton: "#microphone-button",
  cameraButton: "#video-button",
  /** People: the button (its number counts everyone, the bot included) and the pane's rows (Vexa msteams-speakers.ts). */
  rosterButton: "#roster-button",
  peoplePane: '[data-tid="people-pane"], [data-tid="roster"], [role="tree"][aria-label*="articipant"]',
  rosterRow:
    '[data-tid="roster-participant"], li[data-cid="roster-participant"], [data-tid*="participantRosterListItem"], [data-tid="menur1j"]',
  /** A tile's stream wrapper names its participant in data-tid; its voice-level outline lights while they speak (Meeting-BaaS, Vexa). */
  voiceOutline: '[data-stream-type][data-tid] [data-tid="voice-level-stream-outline"]',
  speakingClass: "vdi-frame-occlusion",
  /** Chat (the existing saved pages; a public script: `[data-tid="message-pane-list-viewport"]`, `[data-tid="ckeditor"][role="textbox"]`). */
  chatButton: "#chat-button, button[data-tid='chat-button']",
  chatPane: '[data-tid="chat-pane"], [data-tid="message-pane-list-viewport"]',
  chatMessage: "[data-tid='chat-pane-message']",
  chatSender: "[data-tid='message-author-name']",
  chatText: "[id^='content-'], [data-tid='chat-pane-message-body']",
  chatTime: "time",
  chatInput: "[data-tid='ckeditor'], div[role='textbox'][contenteditable='true']",
  chatSendButton: "button[data-tid='newMessageCommands-send']",
  /** Never read for screens: the chat, its bubbles over the stage, captions. */
  notScreen:
    '[data-tid="chat-pane"], [data-tid="message-pane-list-viewport"], [data-tid="chat-bubble"], [data-tid="closed-caption-renderer-wrapper"], [data-tid="people-pane"]',
  /** Teams messages are limited to about 28 KB; a meeting bot keeps its posts far shorter. */
  chatMaxChars: 4000,
  /** The meeting's mix: the stream id Teams gives it (attendee, Vexa). */
  mainAudio: "mainAudio",
});

/** Texts of Teams' screens, lowercase, straight apostrophes. */
export const TEAMS_TEXTS = Object.freeze({
  signIn: [
    "we need to verify your info before you can join",
    "to join, sign in or use teams on the web",
    "you need to be signed in to teams to access this meeting",
    "sign in to teams to join, or contact the meeting organizer",
    "to join this teams meeting, you need to be signed in to an account",
    "to join this meeting, sign in again or select another account",
    "due to org policy, you need to sign in or use teams on the web to join this meeting",
    "external participants are not permitted to join before the event begins",
    "anonymous users can't join this meeting",
  ],
  notFound: [
    "looks like the meeting url is incorrect",
    "this meeting doesn't exist",
    "we couldn't find this meeting",
  ],
  /** attendee check_if_blocked_by_captcha. */
  captcha: ["verify you're a real person"],
  /** attendee: Teams blocking, retryable. */
  cantConnect: ["we couldn't connect you"],
  /** Vexa: the light-meetings permission gate (Vexa warms the devices up; our getUserMedia override answers). */
  permissionGate: ["select allow to let microsoft teams use your mic and camera"],
  /** After "Join now" with both devices off (Vexa #467, Meeting-BaaS). */
  continueWithoutMediaTexts: ["Continue without audio or video"],
  /** The lobby (attendee, Meeting-BaaS, Vexa). */
  lobby: [
    "someone in the meeting should let you in soon",
    "someone will let you in shortly",
    "waiting for someone to let you in",
    "waiting to be admitted",
    "when the meeting starts, we'll let people in",
    "we've let people in the meeting know you're waiting",
    "your request to join has been sent",
  ],
  denied: [
    "sorry, but you were denied access to the meeting",
    "your request to join was declined",
    "you were denied entry",
  ],
  removed: [
    "you've been removed from this meeting",
    "you have been removed from this meeting",
    "removed from meeting",
    "someone removed you from the meeting",
  ],
  ended: ["meeting ended", "call ended", "the meeting has ended", "this meeting has ended"],
  /** A recording notice that must be agreed to before unmuting (explicit consent; button wording unverified). */
  consent: ["being recorded", "recording has started", "recording and transcription"],
  consentAcceptTexts: ["Agree", "Consent", "Got it", "OK"],
  /** The People pane's self mark. */
  selfMarkers: ["(You)"],
  micOnPrefix: "mute",
  micOffPrefix: "unmute",
  cameraOnPrefix: "turn camera off",
  cameraOffPrefix: "turn camera on",
});
