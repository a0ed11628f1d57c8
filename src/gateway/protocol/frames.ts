import type { TalkErrorCode } from "../../core/index.js";

/**
 * The Gateway frame protocol (seed 004): one JSON text frame per message.
 * A client sends requests; the server answers each with exactly one response
 * and pushes events. Response `id` is null only when the request could not be
 * read far enough to find its id (malformed JSON, missing id).
 */

export interface RequestFrame<P = unknown> {
  type: "req";
  id: string;
  method: string;
  params?: P;
}

export interface WireError {
  code: TalkErrorCode;
  message: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

export type ResponseFrame<T = unknown> =
  | { type: "res"; id: string | null; ok: true; payload: T }
  | { type: "res"; id: string | null; ok: false; error: WireError };

export interface EventFrame<T = unknown> {
  type: "event";
  event: GatewayEventName;
  payload: T;
  /** For `talk.event`: the event's per-session seq, so a client can resume with `afterSeq`. */
  seq?: number;
}

export type ServerFrame = ResponseFrame | EventFrame;

/** Events the server pushes. Audio rides only in `talk.audio`, never inside a `talk.event` payload. */
export const GATEWAY_EVENTS = ["talk.event", "talk.audio", "talk.mode"] as const;
export type GatewayEventName = (typeof GATEWAY_EVENTS)[number];

/** Limits of a request id; longer ids are refused so they cannot be used to bloat responses. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** WebSocket close codes the server uses. */
export const CLOSE_CODES = Object.freeze({
  /** Server shutting down. */
  goingAway: 1001,
  /** Policy violation: sustained rate-limit abuse, slow consumer. */
  policyViolation: 1008,
  /** A frame larger than `maxPayloadBytes`. */
  messageTooBig: 1009,
});
