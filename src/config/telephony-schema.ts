import { z } from "zod";
import { secret } from "./redact.js";

/**
 * The `telephony` section: phone calls through Twilio Media Streams. Every
 * default here is documented in docs/configuration.md; limits are per
 * process. Twilio credentials usually come from TWILIO_ACCOUNT_SID and
 * TWILIO_AUTH_TOKEN, the public URL from PUBLIC_URL (server.publicUrl).
 */

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);
const tenMs = z.number().int().min(10).max(10_000).multipleOf(10);

export const CALL_MODES = ["realtime", "stt-tts"] as const;
export type CallMode = (typeof CALL_MODES)[number];

const callSettings = z
  .object({
    /** realtime (provider speech-to-speech over the relay) or stt-tts (VAD, STT, agent, TTS). */
    mode: z.enum(CALL_MODES).optional(),
    /** Spoken when the call connects; overrides telephony.greeting. "" for none. */
    greeting: z.string().max(1000).optional(),
  })
  .strict();

export const telephonySchema = z
  .object({
    twilio: z
      .object({
        accountSid: z
          .string()
          .regex(/^AC[0-9a-zA-Z]{32}$/, "an Account SID (AC + 32 characters)")
          .optional(),
        /** HMAC key of X-Twilio-Signature and REST password. Never echoed. */
        authToken: secret(z.string().min(1)).optional(),
        /** Base URL Twilio reaches; default server.publicUrl (PUBLIC_URL). */
        publicUrl: z.url().optional(),
        /** Twilio REST API base (a local server in tests). */
        apiBaseUrl: z.url().default("https://api.twilio.com"),
        /** Caller id of outbound calls that name no `from`. */
        defaultFrom: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /**
     * The carrier outbound calls go through when the request names none
     * (`twilio`, ...); default: the first configured carrier with REST
     * credentials, else twilio.
     */
    defaultCarrier: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,31}$/, "a carrier id")
      .optional(),
    /** Mode of calls to numbers not in `numbers`; default realtime when a relay-capable realtime provider is configured, else stt-tts. */
    defaultMode: z.enum(CALL_MODES).optional(),
    /** Per called number (E.164, as Twilio's `To`): mode and greeting. */
    numbers: z.record(z.string().min(1), callSettings).default({}),
    /** Spoken when a call connects; unset or "" for none. */
    greeting: z.string().max(1000).optional(),
    /** Caller speech does not interrupt the greeting during its first this-many ms. */
    greetingProtectMs: nonNegativeInt.default(1500),
    vad: z
      .object({
        /** Local VAD (stt-tts calls): a 10 ms frame counts as speech only above this level, dBFS. */
        threshold: z.number().min(-90).max(0).default(-45),
        /** Speech must last this long before it starts a turn or interrupts the assistant, ms. */
        minSpeechMs: tenMs.default(120),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        /** A stream socket must send a valid `start` within this, else it is closed with 1008. */
        preStartTimeoutMs: positiveInt.default(5000),
        /** Stream sockets not started yet, process-wide. */
        maxPendingConnections: positiveInt.default(200),
        /** Stream sockets (calls), process-wide. */
        maxConnections: positiveInt.default(2000),
        /** Stream sockets from one address (Twilio's media edges are few; a flood from one host is not). */
        maxConnectionsPerIp: positiveInt.default(1000),
        /** Largest frame on a stream socket, bytes; larger closes the call with 1009. */
        maxPayloadBytes: positiveInt.default(65_536),
        /** Stop sending audio while the socket's send buffer holds more than this, bytes. */
        sendHighWaterBytes: positiveInt.default(262_144),
        /** Outbound calls placed and not yet connected or ended. */
        maxPendingOutboundCalls: positiveInt.default(100),
      })
      .strict()
      .prefault({}),
    /** A call whose stream socket drops (not `stop`) keeps its session this long for Twilio to reconnect, ms. */
    reconnectGraceMs: nonNegativeInt.default(5000),
    /** end_call waits at most this long for the farewell to be heard, ms. */
    hangUpTimeoutMs: positiveInt.default(30_000),
  })
  .strict();

export type TelephonyConfig = z.infer<typeof telephonySchema>;
