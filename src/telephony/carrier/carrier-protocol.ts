/**
 * What a carrier is to the telephony surface: one object per carrier that
 * turns the carrier's wire (webhooks, answer documents, media-stream frames,
 * REST) into carrier-neutral data and back. Everything else (the call, its
 * playout and heard positions, DTMF, hang-up, reconnect grace, stream limits,
 * one-time stream tokens, outbound dialing as jobs, the HTTP routes) is
 * written once, over this interface.
 *
 * A carrier is one folder under src/telephony (`twilio/` today) exporting a
 * factory of `CarrierProtocol`. The shapes are chosen to fit the carriers
 * the surface is meant to take:
 * - answer documents: TwiML / TeXML / Plivo XML (text/xml) or a Vonage NCCO
 *   (application/json), built from a stream URL and parameters;
 * - webhook authentication over the URL the carrier requested, the headers
 *   and the raw body: X-Twilio-Signature (HMAC over URL + form), Telnyx's
 *   `telnyx-signature-ed25519` over timestamp + raw body, Plivo's V3
 *   signature, Vonage's signed JWT (with a hash of the body);
 * - media-stream frames: JSON text frames (Twilio, Telnyx, Plivo) or binary
 *   audio frames (Vonage), decoded by a per-stream decoder that keeps the
 *   stream's identity; playback acknowledgements as named marks (Twilio,
 *   Telnyx), checkpoints (Plivo) or none (Vonage: `acknowledgements: "none"`,
 *   then the surface counts audio as heard by the clock);
 * - REST: hang up and dial everywhere; transfer where the carrier has it, and
 *   `capability_unsupported` (TalkError) where it has not.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { AudioFormat } from "../../core/index.js";
import type { CarrierMachineDetectionResult, MachineDetectionRequest } from "../amd/amd-types.js";

/** Paths of the carrier's routes on our server; by convention under `/telephony/<id>/`. */
export interface CarrierRoutePaths {
  /** The voice (answer) webhook the carrier calls for an inbound call. */
  readonly voice: string;
  /** The media-stream WebSocket the answer document points at. */
  readonly stream: string;
  /** Call status callbacks (outbound calls). */
  readonly status: string;
  /** The document a transfer's callee hears first (`briefing?text=...`), for carriers with a briefing. */
  readonly briefing?: string;
  /** The document a transferred call runs (`transfer?to=...`), for carriers that fetch one (Plivo `aleg_url`). */
  readonly transfer?: string;
}

/** A webhook request as a carrier's authentication sees it: nothing Fastify-specific. */
export interface CarrierWebhookRequest {
  /** GET or POST (Vonage hashes a GET's query, a POST's body). Default POST. */
  readonly method?: string | undefined;
  /** The URL the carrier requested: our public URL + path + query (what carriers sign). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The body as received (Ed25519 and JWT body hashes are computed over it). */
  readonly rawBody: string;
  /** The body parsed: form fields (repeated names as arrays) or a JSON object's fields. */
  readonly params: Readonly<Record<string, unknown>>;
}

/** The call an answer webhook is about, as the carrier describes it. */
export interface CarrierInboundCall {
  readonly callId: string;
  readonly accountId?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly direction?: string | undefined;
}

/** A call status callback: the call, the carrier's status word, and whether the call is over. */
export interface CarrierCallStatus {
  readonly callId: string;
  /** The carrier's own word (busy, no-answer, failed, canceled, completed...): the session's close reason when terminal. */
  readonly status: string;
  readonly terminal: boolean;
}

/** The document that connects an answered call to our media-stream WebSocket. */
export interface AnswerDocument {
  readonly body: string;
  readonly contentType: string;
}

/** Where a call's media should go: our WebSocket URL and the parameters the carrier hands back at the stream's start. */
export interface StreamTarget {
  readonly url: string;
  /** Echoed in the stream's start event (Twilio `customParameters`, Telnyx `custom_parameters`, Vonage headers). */
  readonly parameters: Readonly<Record<string, string>>;
}

/** A media-stream frame, decoded into what the call understands. */
export type CarrierStreamEvent =
  | {
      readonly type: "start";
      readonly callId: string;
      readonly streamId: string;
      /** The caller's audio format, or undefined when the carrier announced one we do not model. */
      readonly format: AudioFormat | undefined;
      /** The format as the carrier named it (logs and refusals). */
      readonly formatName: string;
      readonly parameters: Readonly<Record<string, string>>;
    }
  /** `base64`: the frame's payload as it came, when the wire carries base64 (checked strictly): passed on as is. */
  | { readonly type: "media"; readonly audio: Uint8Array; readonly base64?: string }
  /** The carrier played the audio sent before the acknowledgement `name` (a mark or checkpoint echo). */
  | { readonly type: "played"; readonly name: string }
  | { readonly type: "dtmf"; readonly digit: string }
  | { readonly type: "stop" };

/**
 * A refused frame: `reason` is stable (counted by reason in telephony stats,
 * listed in docs/telephony.md), `close` set when the frame must end the
 * stream (an oversized frame: 1009).
 */
export interface CarrierFrameRejection {
  readonly reason: string;
  readonly message: string;
  readonly close?: { readonly code: number; readonly reason: string };
}

export type CarrierFrameResult =
  | { readonly ok: true; readonly event: CarrierStreamEvent | undefined }
  | { readonly ok: false; readonly rejection: CarrierFrameRejection };

/** What we send on a stream: text (JSON) or binary frames, as the carrier wants them. */
export type CarrierFrame = string | Uint8Array;

/** One media stream's wire, in both directions; created per socket, so it may hold the stream's identity and counters. */
export interface CarrierStreamCodec {
  /** One WebSocket message from the carrier. Never throws: a bad frame is a rejection. */
  decode(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): CarrierFrameResult;
  /** Assistant audio (in `playoutFormat`) to send. */
  media(audio: Uint8Array): CarrierFrame;
  /** An acknowledgement request the carrier answers with `played{name}` once the audio before it played. */
  mark(name: string): CarrierFrame;
  /** Drops the audio the carrier buffered (barge-in); pending acknowledgements come back as `played` (or never: the playout forgets them at `clear`). */
  clear(): CarrierFrame;
  /** Plays DTMF on the stream with the carrier's own message, where it has one (Plivo `sendDTMF`). */
  dtmf?(digits: string): CarrierFrame;
  /**
   * The socket closed after the start without a `stop` frame: for a carrier
   * that ends its streams by closing the socket and never reopens one, the
   * call's close reason for this close `code` (a hang-up, or a network
   * drop). Absent, or undefined: the call is held for the reconnect grace.
   */
  ended?(code: number): string | undefined;
}

export interface CarrierStreamOptions {
  /** Largest frame accepted, bytes. */
  maxBytes: number;
  /** The WebSocket upgrade request (Vonage carries the call's identity in it, not in a start frame). */
  request: { readonly url: string; readonly headers: IncomingHttpHeaders };
  /**
   * The URL the carrier requested for the upgrade, as carriers that sign the
   * handshake sign it (Plivo): the public URL (or the Host, in local demo
   * mode) + path + query, http(s) scheme.
   */
  signedUrl?: string;
}

/**
 * Placing a call: who, and where its media goes once answered. Carriers that
 * take the answer document inline (Twilio `Twiml`, Telnyx TeXML, Vonage
 * `ncco`) build it from `stream` with `answer()`; one that only fetches an
 * answer URL (Plivo `answer_url`) is given `answerUrl`: the voice webhook,
 * which serves the dial's answer document when its query carries the dial's
 * stream token.
 */
export interface CarrierDialRequest {
  readonly to: string;
  readonly from: string;
  readonly stream: StreamTarget;
  /**
   * Our voice webhook URL serving this dial's answer document (the dial's
   * stream token in its query), for a carrier that fetches the answer once
   * the call is answered instead of taking it inline (Plivo `answer_url`).
   */
  readonly answerUrl?: string;
  /** The URL the carrier posts status callbacks to. */
  readonly statusCallbackUrl: string;
  /** Answering-machine detection to request with the call (src/telephony/amd). */
  readonly machineDetection?: MachineDetectionRequest | undefined;
  readonly signal: AbortSignal;
}

/** A call the carrier accepted: its id and first status. */
export interface CarrierCall {
  /**
   * The carrier's id of the call; undefined when the carrier's answer names
   * none and the call is named by its first status callback instead
   * (`CarrierRestClient.callIdFromStatus`).
   */
  readonly callId: string | undefined;
  readonly status: string;
}

/**
 * The carrier's call-control API. Errors are TalkErrors: provider_unavailable
 * (unreachable, 5xx), provider_error (refused), cancelled (signal),
 * capability_unsupported (transfer on a carrier without it).
 */
export interface CarrierRestClient {
  /** Places a call that connects to `stream` when answered. */
  dial(request: CarrierDialRequest): Promise<CarrierCall>;
  /** Ends a live call, or cancels one still ringing (`ringing: true`). */
  hangUp(callId: string, options: { signal: AbortSignal; ringing?: boolean }): Promise<void>;
  /**
   * Moves a live call to `destination` (E.164 or SIP URI). With
   * `briefingUrl` (a carrier with `briefing`), the callee first hears the
   * document served there.
   */
  transfer(
    callId: string,
    destination: string,
    signal: AbortSignal,
    options?: TransferOptions,
  ): Promise<void>;
  /**
   * Plays DTMF into a live call with the carrier's own command, where it has
   * one (else tones go in-band). `capability_unsupported` for digits the
   * command does not take (a pause): those are played in-band.
   */
  sendDtmf?(
    callId: string,
    digits: string,
    signal: AbortSignal,
    options?: { requestId?: string },
  ): Promise<void>;
  /** A repeated sendDtmf with the same `requestId` plays the digits once (Telnyx `command_id`): outages are retried. */
  readonly dtmfIdempotent?: boolean;
  /**
   * The dial's answer may not name the call (Telnyx's account-scoped TeXML
   * calls answer `{from, to, status}`): the dialer then learns the id from
   * the call's first status callback, whose URL names the dial (`?dial=`).
   */
  readonly callIdFromStatus?: boolean;
}

/** How a transfer is asked of the carrier. */
export interface TransferOptions {
  /** Where the callee first hears the briefing (a carrier with `briefing`). */
  briefingUrl?: string;
  /** The document the call runs (a carrier with `transferDocument`: Plivo's `aleg_url`). */
  documentUrl?: string;
  /** The same for every attempt of one transfer, for carriers that drop repeats (Telnyx `command_id`). */
  requestId?: string;
}

/**
 * Who a webhook comes from: `ok`, or `refused` (403, or the carrier's
 * `refusalStatus`, never saying why).
 * Unsigned local demo mode (no credentials, loopback peers) is decided by
 * the surface, not here.
 */
export type WebhookVerdict = "ok" | "refused";

export interface CarrierProtocol {
  /** Short lowercase name: route prefix, logs, config key (`twilio`). */
  readonly id: string;
  /** The carrier's display name, for logs and errors ("Twilio"). */
  readonly name: string;
  readonly paths: CarrierRoutePaths;
  /**
   * The audio format of this carrier's media streams, both ways: u-law (or
   * A-law) 8 kHz mono, or 16-bit PCM at 8 or 16 kHz mono. A stream whose
   * start announces another format is refused (1008).
   */
  readonly lineFormat: AudioFormat;
  /** How playback is acknowledged: named marks echoed after playback, or nothing (count by the clock). */
  readonly acknowledgements: "marks" | "none";
  /**
   * Audio the carrier buffers for playback at most, ms (Vonage: 3,072 frames
   * of 20 ms). The playout keeps the audio sent and not yet acknowledged
   * under this, holding the rest until acknowledgements come back.
   * Undefined: the carrier buffers whatever it is sent.
   */
  readonly playbackBufferMs?: number | undefined;
  /**
   * 20 ms frames one outbound media message may carry: a carrier that plays
   * media of any length (Twilio; Telnyx takes 20 ms to 30 s) gets a large
   * provider delta in one message per mark interval instead of one per 20 ms.
   * Default 1.
   */
  readonly maxFramesPerMessage?: number | undefined;
  /** HTTP methods the carrier's voice (answer) webhook uses. Default ["POST"]. */
  readonly voiceMethods?: ReadonlyArray<"GET" | "POST"> | undefined;
  /** Status a refused webhook gets: 403 (Twilio, Telnyx, Plivo) or 401 (Vonage's signed JWT). Default 403. */
  readonly refusalStatus?: 401 | 403 | undefined;
  /** Webhooks can be authenticated (credentials configured); false: local demo mode or disabled. */
  readonly signed: boolean;
  /** The REST client, when credentials for it are configured. */
  readonly rest: CarrierRestClient | undefined;
  /** The caller id outbound calls use when the request names none. */
  readonly defaultFrom: string | undefined;
  /** Settings missing for the carrier to work, for the 503 of a disabled surface ("set X, Y"). */
  readonly missingSettings: string;

  authenticate(request: CarrierWebhookRequest): WebhookVerdict;
  /** The call an answer webhook announces; undefined when it names none (400). */
  inboundCall(request: CarrierWebhookRequest): CarrierInboundCall | undefined;
  /** A status callback's call and status; undefined when it carries neither (400). */
  callStatus(request: CarrierWebhookRequest): CarrierCallStatus | undefined;
  /** A status-route webhook that is an AMD result: decoded or refused (400); undefined when it is not one. */
  machineDetection?(request: CarrierWebhookRequest): CarrierMachineDetectionResult | undefined;
  /** The answer document connecting a call to `stream`. */
  answer(stream: StreamTarget): AnswerDocument;
  /** The document a transfer's callee hears before being connected (served at `paths.briefing`). */
  briefing?(text: string): AnswerDocument;
  /**
   * The briefing is an audio file the carrier plays to the callee (Telnyx
   * `audio_url`): `paths.briefing` serves the text spoken by the local TTS
   * as WAV instead of a document.
   */
  readonly briefingAudio?: boolean;
  /** The document a transferred call runs (served at `paths.transfer`): a dial of `destination`, the callee hearing `briefingUrl` first. */
  transferDocument?(destination: string, briefingUrl: string | undefined): AnswerDocument;
  /**
   * Who may fetch the briefing and transfer documents: `webhook` (the
   * carrier signs those fetches like its webhooks: Twilio) or `url` (it does
   * not, or not documentedly: the URLs carry our own HMAC). Default `webhook`.
   */
  readonly documentAuth?: "webhook" | "url";
  /** A codec for one media-stream socket. */
  openStream(options: CarrierStreamOptions): CarrierStreamCodec;
}
