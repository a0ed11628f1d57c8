// The typed Talk API client for integrators and tests.
export { TalkClient, fromWire } from "./talk-client.js";
export type { TalkClientOptions, TalkClientEvents, RequestOptions } from "./talk-client.js";
export { TALK_METHODS, isTalkMethod } from "../gateway/index.js";
export type {
  TalkMethod,
  TalkMethodMap,
  TalkParams,
  TalkResult,
  TalkAudioPayload,
  PlaybackPosition,
  TalkModeState,
  SpeakResult,
  ClientCreateResult,
  ToolCallResult,
  SessionCreateResult,
  SessionJoinResult,
} from "../gateway/index.js";
export type { RequestFrame, ResponseFrame, EventFrame, WireError } from "../gateway/index.js";
export type { TalkEvent, TalkEventOf, TalkEventPayloads, TalkEventType } from "../core/index.js";
