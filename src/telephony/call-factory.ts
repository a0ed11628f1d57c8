/**
 * Creates the calls of the surface: per-call settings resolved from the
 * telephony config for the called number (mode, greeting) over the
 * defaults, and the call's narrow context. A call leaves the registry when
 * it closes.
 */
import type { CallMode, TelephonyConfig } from "../config/index.js";
import type { CallRegistry } from "./call-registry.js";
import {
  CallSession,
  type CallCarrier,
  type CallIdentity,
  type CallSessionContext,
  type CallSettings,
} from "./call-session.js";

export interface CallFactoryOptions {
  config: TelephonyConfig;
  /** talk.input.silenceTimeoutMs: silence that ends a caller's turn (stt-tts). */
  silenceTimeoutMs: number;
  /** A realtime provider that can be relayed is configured (the default mode is then realtime). */
  realtimeAvailable: boolean;
  /** The calls' narrow context. */
  context: CallSessionContext;
  calls: CallRegistry;
}

/** Per-call settings of an outbound call: its request's mode and greeting; `holdGreeting` while AMD decides. */
export type CallOverrides = { mode?: CallMode; greeting?: string; holdGreeting?: boolean };

export type CreateCall = (
  carrier: CallCarrier,
  identity: CallIdentity,
  overrides?: CallOverrides,
  metadata?: Record<string, string>,
) => CallSession;

export function callFactory(o: CallFactoryOptions): { createCall: CreateCall; defaultMode: CallMode } {
  const defaultMode: CallMode = o.config.defaultMode ?? (o.realtimeAvailable ? "realtime" : "stt-tts");

  const settingsFor = (to: string | undefined, overrides: CallOverrides = {}): CallSettings => {
    const number = to !== undefined ? o.config.numbers[to] : undefined;
    const greeting = overrides.greeting ?? number?.greeting ?? o.config.greeting;
    return {
      mode: overrides.mode ?? number?.mode ?? defaultMode,
      greeting: greeting ? greeting : undefined,
      greetingProtectMs: o.config.greetingProtectMs,
      vad: o.config.vad,
      silenceTimeoutMs: Math.max(100, Math.round(o.silenceTimeoutMs / 10) * 10),
      sendHighWaterBytes: o.config.limits.sendHighWaterBytes,
      hangUpTimeoutMs: o.config.hangUpTimeoutMs,
      transferAnnouncement: o.config.transfer.announcement || undefined,
      ...(overrides.holdGreeting ? { holdGreeting: true } : {}),
    };
  };

  const createCall: CreateCall = (carrier, identity, overrides, metadata) => {
    const call: CallSession = new CallSession(
      o.context,
      carrier,
      settingsFor(identity.to, overrides),
      identity,
      () => o.calls.remove(call),
      metadata,
    );
    return call;
  };
  return { createCall, defaultMode };
}
