/**
 * Everything the Zoom web client driver knows about Zoom's pages, in one
 * place, each fact with the maintained open bot (or public script) it came
 * from: when Zoom changes its UI, this is the file to update, and the
 * simulator (test/support/meeting-sim/zoom-sim-page.ts) with it. None was
 * captured from the live client here (it cannot be reached from the
 * development machines); `talkgate meetings probe <zoom link>` records what
 * the live client shows, to correct these in minutes. English texts; matched
 * case-insensitively, typographic apostrophes read as '.
 */

/** Where each fact came from (repository + path), cited by the screens table and docs/meetings.md. */
export const ZOOM_SOURCES = {
  vexaJoin: "Vexa-ai/vexa core/meetings/modules/join/src/zoom/join.ts, selectors.ts",
  vexaAdmission: "Vexa-ai/vexa core/meetings/modules/join/src/zoom/admission.ts (and issues #966, #967)",
  vexaLeave: "Vexa-ai/vexa core/meetings/modules/join/src/zoom/leave.ts, removal.ts",
  vexaSpeakers: "Vexa-ai/vexa core/meetings/modules/zoom-capture/src/zoom-speakers.ts, zoom-chat.ts",
  vexaAudio: "Vexa-ai/vexa core/meetings/services/bot/src/capture-bridge.ts (issues #515, #176)",
  attendee: "attendee-labs/attendee bots/zoom_web_bot_adapter/zoom_web_ui_methods.py",
  screenapp:
    "screenappai/meeting-bot src/bots/ZoomBot.ts, src/tasks/RecordingTask.ts, src/constants/index.ts",
  baas: "Meeting-BaaS/meet-teams-bot pull requests #217, #237 (Zoom web consent modal, anti-bot wall retry)",
  premid: "PreMiD/Presences websites/Z/Zoom/presence.ts (public; not one of the four maintained bots)",
} as const;

export const ZOOM_SELECTORS = Object.freeze({
  /** The error page's title; with "(3,001)" it means the host has not started the meeting (Vexa selectors.ts). */
  errorTitle: "Error - Zoom",
  /** The invite landing's link to the web client (screenapp ZoomBot.ts: `a` "Join from your browser"). */
  launcherTexts: ["Join from your browser", "Join from Your Browser", "join from browser"],
  /** OneTrust's cookie banner over the classic client's pre-join card; it takes the clicks until answered (Vexa join.ts). */
  cookieAccept: "#onetrust-accept-btn-handler",
  cookieReject: "#onetrust-reject-all-handler",
  /** screenapp ZoomBot.ts clicks a button with this text. */
  cookieAcceptTexts: ["Accept Cookies"],
  /** The media permission dialog, shown up to twice; Allow is needed to receive audio at all (Vexa join.ts). */
  allowTexts: ["Allow"],
  permissionDismissTexts: ["Continue without microphone and camera"],
  /** Name field: React client `#input-for-name`, classic client `#inputname` (Vexa selectors.ts). */
  nameInput: '#input-for-name, #inputname, input[placeholder="Your Name" i]',
  /** A passcode field above the name (Vexa join.ts). */
  passcodeInput: 'input[placeholder*="passcode" i], input[placeholder*="password" i], input[type="password"]',
  /** Join: React `button.preview-join-button` (class `disabled` until a name was typed with real keys), classic `#joinBtn` (Vexa). */
  joinButton: "button.preview-join-button, #joinBtn",
  /** Preview toggles: aria-label "Mute" means the microphone is on, "Stop Video" that the camera is (Vexa selectors.ts). */
  previewMic: "#preview-audio-control-button",
  previewVideo: "#preview-video-control-button",
  /** The reCAPTCHA frame of the bot wall / classic client (Vexa join.ts). */
  captchaFrame: 'iframe[src*="recaptcha"], iframe[title="reCAPTCHA"]',
  /**
   * Only inside the call: the footer's participants button and audio control (PreMiD presence,
   * Vexa capture-bridge.ts), the footer itself (screenapp: `#wc-footer`). The footer auto-hides
   * a few seconds after admission (Vexa #966), so presence counts, not visibility; a Leave
   * button alone does not (the waiting room shows one too).
   */
  inCall:
    "#wc-footer .footer-button__participants-icon, #wc-footer .join-audio-container, .speaker-active-container__video-frame, .gallery-video-container__main-view",
  /** Zoom's own dialogs: the only place an end, a removal or a notice is read from (Vexa removal.ts: `.zm-modal-body-title`). */
  modal: '.zm-modal, [role="dialog"], [role="alertdialog"]',
  modalTitle: ".zm-modal-body-title",
  /** screenapp RecordingTask.ts: the end dialog's label. */
  endedLabel: '[aria-label="Meeting is end now"]',
  /** The consent button of custom consent modals (Meeting-BaaS #217). */
  disclaimerAgree: "#disclaimer_agree",
  /** The footer's audio control: "join audio" before computer audio, then "mute/unmute my microphone" (Vexa capture-bridge.ts; public Zoom scripts). */
  audioButton: ".join-audio-container__btn",
  /** The footer's video control, "start sending my video" while off (PreMiD presence). */
  videoButton: ".send-video-container__btn, .send-video-container > button",
  /** Participants: the footer button, its counter of everyone in the call, the bot included (screenapp, PreMiD). */
  participantsButton: "#wc-footer button:has(.footer-button__participants-icon)",
  participantsCounter: ".footer-button__participants-icon .footer-button__number-counter span",
  /** The participants panel, rendered only while open, one row per participant (public Zoom userscripts). */
  participantsPanel: ".participants-section-container",
  participantRow: ".participants-section-container .participants-li",
  participantName: ".participants-item__display-name",
  participantLabel: ".participants-item__name-label",
  /** The speaker view's active tile and the speaker bar's active frame; the name in the avatar footer (Vexa zoom-speakers.ts). */
  activeSpeaker:
    ".speaker-active-container__video-frame .video-avatar__avatar-footer, .speaker-bar-container__video-frame--active .video-avatar__avatar-footer",
  /** Leave, then "Leave Meeting" (Enter would cancel the dialog) (Vexa leave.ts). */
  leaveButton: '#wc-footer button[aria-label="Leave"], [footer-section="right"] button[aria-label="Leave"]',
  leaveConfirm: "button.leave-meeting-options__btn--danger, button.leave-meeting-options__btn",
  /** The waiting room's own Leave (attendee: `button.leave-btn` cancels a join). */
  waitingLeave: "button.leave-btn",
  /** Chat panel, messages and compose box (existing saved pages; Vexa zoom-chat.ts). */
  chatOpenButton: 'button[aria-label^="open the chat panel" i], #wc-footer button[aria-label="Chat"]',
  chatMessage: ".chat-message__container, .new-chat-message__container",
  chatSender: ".chat-item__sender, .chat-message__sender, .chat-message-text__user-name",
  chatText: ".chat-message__text-content, .new-chat-message__text-content",
  chatTime: ".chat-item__chat-info-time-stamp, time",
  chatInput: ".chat-box__chat-textarea, textarea[aria-label^='Type message']",
  chatSendButton: "button.chat-box__send-button",
  /** The chat list and any chat notification: never read for screens. */
  notScreen:
    '.chat-container, [aria-label="Chat Message List"], .chat-toast, .chat-notification, .participants-section-container',
  /** Zoom's in-meeting chat takes up to 1,024 characters a message. */
  chatMaxChars: 1024,
});

/** Texts of Zoom's screens, lowercase, straight apostrophes (the reader folds ’ into '). */
export const ZOOM_TEXTS = Object.freeze({
  /** The error page before the host starts: "This meeting link is invalid (3,001)" (Vexa selectors.ts); the SDK's "host to start the meeting" (attendee). */
  hostNotStarted: [
    "(3,001)",
    "meeting has not started",
    "waiting for the host to start",
    "host to start the meeting",
  ],
  /** Not a meeting at all (checked after hostNotStarted: both start alike). */
  notFound: [
    "this meeting link is invalid",
    "this meeting id is not valid",
    "meeting does not exist",
    "invalid meeting id",
  ],
  /** Zoom's anti-bot wall, after Join, keyed to the meeting's account (Vexa selectors.ts zoomBotBlockTexts). */
  botWall: ["detected you may be a bot", "automated bots aren't allowed", "must use zoom rtms"],
  /** attendee zoom_web_ui_methods.py ("check captcha") and the reCAPTCHA frame. */
  captcha: ["check captcha", "i'm not a robot"],
  signIn: [
    "sign in to join this meeting",
    "only authenticated users can join",
    "this meeting requires authentication",
    "authentication is required",
    "the host requires authentication on the commercial zoom platform to join this meeting",
    "this meeting is for authorized attendees only",
  ],
  /** attendee: "Passcode wrong"; the existing saved pages: "Incorrect passcode". */
  passcodeWrong: ["passcode wrong", "incorrect passcode"],
  /** attendee: a generic join error it retries. */
  networkError: [
    "your network connection has timed out or your organization has disabled access to zoom from the browser",
  ],
  browserRefused: ["the meeting host has disabled join from browser", "your browser is not supported"],
  /** The waiting room (Vexa selectors.ts); only these whole phrases: bare "please wait" shows in the call too (Vexa #966). */
  waitingRoom: [
    "please wait, the meeting host will let you in soon",
    "host has joined. we've let them know you're here",
  ],
  /** Dialogs over the call. */
  ended: [
    "this meeting has been ended by host",
    "the meeting has been ended",
    "this meeting has ended",
    "meeting is end now",
  ],
  removed: ["you have been removed", "removed from the meeting", "you've been removed from this meeting"],
  /** From the waiting room (attendee: KICK_OUT_FROM_WAITING_ROOM). Wording unverified. */
  denied: [
    "removed you from the waiting room",
    "the host has declined your request to join",
    "you cannot join this meeting",
  ],
  /** "This meeting is being recorded" (Vexa #176, Meeting-BaaS #237); until acknowledged no audio (Vexa #515). */
  consent: ["this meeting is being recorded", "is being recorded", "consenting to be recorded"],
  consentAcceptTexts: ["Got it", "Continue", "I agree", "OK"],
  /** After admission: computer audio, or nothing is heard (existing pages; Vexa capture-bridge.ts). */
  computerAudioTexts: ["Join Audio by Computer", "Join with Computer Audio"],
  /** Advisory notices over the call (Vexa leave.ts dismissZoomPopups). */
  noticeDismissTexts: ["Got it", "OK", "Dismiss"],
  /** The in-call audio control's labels (public Zoom scripts: "mute my microphone" while it is on). */
  micOnLabel: "mute my microphone",
  micOffLabel: "unmute my microphone",
  joinAudioLabel: "join audio",
  videoOffLabel: "start sending my video",
  videoOnLabel: "stop sending my video",
  /** The participants panel's self label. */
  selfMarkers: ["(me)", "me)"],
});
