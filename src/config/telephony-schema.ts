import { z } from "zod";
import { amdSchema } from "./amd-schema.js";
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

/**
 * `telephony.recording`: a two-channel WAV per call (caller, assistant as
 * played) under `<dataDir>/recordings/`. Off by default.
 */
export const recordingSchema = z
  .object({
    /** Record calls. Default false. */
    enabled: z.boolean().default(false),
    /** Record only the calls of these numbers of ours (the called number inbound, the caller id outbound); unset: every call. */
    numbers: z.array(z.string().min(1).max(64)).max(10_000).optional(),
    /** Spoken to the caller when a recorded call connects, before the greeting. Unset or "": none. */
    notice: z.string().max(500).optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.numbers === undefined) return;
    if (!r.enabled)
      ctx.addIssue({
        code: "custom",
        path: ["numbers"],
        message: "lists numbers to record while telephony.recording.enabled is false: set enabled to true",
      });
    else if (r.numbers.length === 0)
      ctx.addIssue({
        code: "custom",
        path: ["numbers"],
        message: "is empty and would record no call: leave it out to record every call",
      });
    const seen = new Set<string>();
    r.numbers.forEach((n, i) => {
      if (seen.has(n)) ctx.addIssue({ code: "custom", path: ["numbers", i], message: `lists ${n} twice` });
      seen.add(n);
    });
  });

export type RecordingConfig = z.infer<typeof recordingSchema>;

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
        /**
         * Secrets of the SharedKeys Twilio signs webhooks with when a Webhook
         * Rule names one (X-Twilio-Webhooks-Signature-Settings; HMAC-SHA256 or
         * SHA1): the new and the old while a key is rotated. Never echoed.
         */
        sharedKeySecrets: z
          .array(secret(z.string().min(1)))
          .max(4)
          .default([]),
        /** Base URL Twilio reaches; default server.publicUrl (PUBLIC_URL). */
        publicUrl: z.url().optional(),
        /** Twilio REST API base (a local server in tests). */
        apiBaseUrl: z.url().default("https://api.twilio.com"),
        /** Caller id of outbound calls that name no `from`. */
        defaultFrom: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    telnyx: z
      .object({
        /** Ed25519 public key of the account (base64, 32 bytes): verifies telnyx-signature-ed25519. */
        publicKey: z
          .string()
          .regex(/^[A-Za-z0-9+/]{43}=$/, "a base64 Ed25519 public key (32 bytes)")
          .optional(),
        /** API key (Bearer) of the REST calls: dial (TeXML), hang-up and transfer (Call Control). Never echoed. */
        apiKey: secret(z.string().min(1)).optional(),
        /** The TeXML application's connection id outbound calls are placed from. */
        connectionId: z.string().min(1).optional(),
        /** The account's id (a TeXML webhook's AccountSid): the account-scoped TeXML calls outbound calls use. */
        accountSid: z.string().min(1).max(128).optional(),
        /** Base URL Telnyx reaches; default server.publicUrl (PUBLIC_URL). */
        publicUrl: z.url().optional(),
        /** Telnyx REST API base (a local server in tests). */
        apiBaseUrl: z.url().default("https://api.telnyx.com"),
        /** How far a webhook's telnyx-timestamp may be from our clock, seconds. */
        timestampToleranceS: z.number().int().min(1).max(3600).default(300),
        /** Caller id of outbound calls that name no `from`. */
        defaultFrom: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    plivo: z
      .object({
        /** PLIVO_AUTH_ID: the account's Auth ID (REST user name, path of every REST call). */
        authId: z
          .string()
          .regex(/^[A-Z0-9]{20}$/, "an Auth ID (20 uppercase letters or digits)")
          .optional(),
        /** PLIVO_AUTH_TOKEN: HMAC key of X-Plivo-Signature-V3 and REST password. Never echoed. */
        authToken: secret(z.string().min(1)).optional(),
        /** Base URL Plivo reaches; default server.publicUrl (PUBLIC_URL). */
        publicUrl: z.url().optional(),
        /** Plivo REST API base (a local server in tests). */
        apiBaseUrl: z.url().default("https://api.plivo.com"),
        /** Caller id of outbound calls that name no `from`. */
        defaultFrom: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    vonage: z
      .object({
        /** VONAGE_APPLICATION_ID: the Voice API application (REST JWTs). */
        applicationId: z.string().min(1).max(128).optional(),
        /** VONAGE_PRIVATE_KEY: the application's RSA private key, PEM. Never echoed. */
        privateKey: secret(z.string().min(1)).optional(),
        /** VONAGE_SIGNATURE_SECRET: the HS256 key of signed webhooks. Never echoed. */
        signatureSecret: secret(z.string().min(1)).optional(),
        /** Base URL Vonage reaches; default server.publicUrl (PUBLIC_URL). */
        publicUrl: z.url().optional(),
        /** Voice API base (a local server in tests). */
        apiBaseUrl: z.url().default("https://api.nexmo.com"),
        /** Caller id of outbound calls that name no `from` (a Vonage number). */
        defaultFrom: z.string().min(1).optional(),
        /** A signed webhook older than this (its token's `iat`) is refused, seconds. */
        maxWebhookAgeS: z.number().int().min(30).max(3600).default(300),
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
    transfer: z
      .object({
        /** Said to the caller before a transfer (transfer_call); "" for nothing (the model announces it). */
        announcement: z.string().max(500).default("Please hold while I transfer your call."),
      })
      .strict()
      .prefault({}),
    /** Answering-machine detection of outbound calls (docs/telephony.md). */
    amd: amdSchema.prefault({}),
    recording: recordingSchema.prefault({}),
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
