/**
 * The shapes a call is made from (what the process, the carrier and the
 * called number's settings give it); CallSession and its parts share them.
 */
import type { TalkLogger, TalkRuntime } from "../core/index.js";
import type { SessionControllerFactory } from "../voice/index.js";
import type { CallControlRegistry } from "../core/index.js";
import type { CallMode } from "../config/index.js";
import type { TelephonyStats } from "./telephony-stats.js";
import type { CarrierRestClient } from "./carrier/carrier-protocol.js";
import type { TransferDocuments } from "./document-urls.js";
import type { LineAudio } from "./line-audio.js";
import type { RecordingPolicy } from "./recording/recording-policy.js";

/** What a call needs from the process: narrow, no back-reference to the route or registry. */
export interface CallSessionContext {
  runtime: TalkRuntime;
  /** The process's one controller factory (providers, tools, trusted pipeline options bound once). */
  createController: SessionControllerFactory;
  callControls: CallControlRegistry;
  /** Where latency figures are also counted (besides the session's latency.metrics events). */
  stats?: TelephonyStats;
  /** Which calls are recorded (telephony.recording); undefined: none. */
  recording?: RecordingPolicy | undefined;
  logger: TalkLogger;
}

/** Per-call settings, resolved from the telephony config for the called number. */
export interface CallSettings {
  mode: CallMode;
  greeting: string | undefined;
  greetingProtectMs: number;
  vad: { threshold: number; minSpeechMs: number };
  silenceTimeoutMs: number;
  sendHighWaterBytes: number;
  hangUpTimeoutMs: number;
  /** Said to the caller before a transfer; undefined: nothing (the model announces it). */
  transferAnnouncement: string | undefined;
  /** Greeting and caller audio wait for `releaseGreeting()` (answering-machine detection first). */
  holdGreeting?: boolean;
}

/** The carrier a call is on: its id (session metadata), REST client, line format and playback buffer. */
export interface CallCarrier {
  readonly id: string;
  readonly rest: CarrierRestClient | undefined;
  readonly line: LineAudio;
  /** The URLs of a transfer's briefing and document on this carrier; undefined before the server listens. */
  transferDocuments?(): TransferDocuments | undefined;
  /** Audio the carrier buffers at most, ms (CarrierProtocol.playbackBufferMs); undefined: unbounded. */
  readonly playbackBufferMs?: number | undefined;
  /** 20 ms frames one outbound media message may carry (CarrierProtocol.maxFramesPerMessage). Default 1. */
  readonly maxFramesPerMessage?: number | undefined;
}

export interface CallIdentity {
  callSid: string;
  from?: string | undefined;
  to?: string | undefined;
  direction?: string | undefined;
}

export type CallState = "created" | "connected" | "detached" | "closing" | "closed";
