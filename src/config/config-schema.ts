import { availableParallelism } from "node:os";
import { z } from "zod";
import {
  CREATION_MATRIX,
  FAULT_DEFAULTS,
  FAULT_LIMITS,
  TALK_BRAINS,
  TALK_MODES,
  TALK_TRANSPORTS,
} from "../core/index.js";
import { realtimeProvidersSchema } from "./realtime-provider-schema.js";
import { secret } from "./redact.js";
import { speechProvidersSchema } from "./speech-provider-schema.js";
import { telephonySchema } from "./telephony-schema.js";

/**
 * The one configuration object of a talkgate process. Every object is strict:
 * an unknown key fails start-up with a message naming it. Defaults here are
 * the embedded defaults: loopback, in-process coordination, local providers,
 * no keys.
 */

const port = z.number().int().min(0).max(65_535);
const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);

/** Token scopes (docs/api.md, "Scopes"): admin ⊇ direct-tools ⊇ write ⊇ read. */
export const SCOPES = ["read", "write", "direct-tools", "admin"] as const;

const tokenSchema = z
  .object({
    /** Who the token belongs to, for logs and metrics. */
    name: z.string().min(1),
    /** The bearer token (at least 16 characters). */
    token: secret(z.string().min(16, "a token must be at least 16 characters")),
    scopes: z.array(z.enum(SCOPES)).min(1),
  })
  .strict();

export const serverSchema = z
  .object({
    /** Interface to bind. Non-loopback addresses require auth tokens. */
    host: z.string().min(1).default("127.0.0.1"),
    port: port.default(8787),
    /** Base URL the outside world (carriers) reaches this server at, e.g. https://talk.example.com. */
    publicUrl: z.url().optional(),
    /**
     * Server processes sharing the port on this machine (node:cluster), each a
     * worker of the cluster layer. Default 1. The processes share sessions,
     * stream claims and jobs through Redis: redis.url, or else a private
     * redis-server the primary runs for the pool (docs/cluster.md, "Every core").
     * "auto": as many as the cores this process may use (os.availableParallelism).
     */
    workers: z
      .union([positiveInt.max(64), z.literal("auto")], {
        error: 'must be a whole number from 1 to 64, or "auto"',
      })
      .default(1)
      // "auto": one process per core this process may run on (every core of the machine, or of its cgroup).
      .transform((n) => (n === "auto" ? Math.min(64, availableParallelism()) : n)),
  })
  .strict();

export const gatewaySchema = z
  .object({
    /** Largest WebSocket frame accepted on /talk, bytes; larger frames close the socket with 1009. */
    maxPayloadBytes: positiveInt.default(1024 * 1024),
    /** Concurrent /talk connections. */
    maxConnections: positiveInt.default(1000),
    /** Live sessions one connection may own. */
    maxSessionsPerConnection: positiveInt.default(16),
    rateLimit: z
      .object({
        /** Sustained requests per second per connection. */
        requestsPerSecond: positiveInt.default(200),
        /** Burst above the sustained rate. */
        burst: positiveInt.default(400),
      })
      .strict()
      .prefault({}),
    /** How long a session outlives its owner's disconnect, waiting for talk.session.join. */
    reconnectGraceMs: nonNegativeInt.default(30_000),
    /** WebSocket ping interval; a peer that misses a pong is dropped. */
    heartbeatMs: positiveInt.default(30_000),
    /** Decoded audio bytes one talk.session.appendAudio may carry (64 KiB = 2 s of 16 kHz PCM16). */
    maxAudioBytesPerFrame: positiveInt.default(64 * 1024),
    /** Reply bytes queued and not read on one /talk socket before the peer is cut as a slow consumer. */
    maxBufferedBytes: positiveInt.default(32 * 1024 * 1024),
    /** The same for all the sockets of one token together (the slowest cut first). */
    maxBufferedBytesPerClient: positiveInt.default(32 * 1024 * 1024),
    /** The same for every /talk socket of the process together (the slowest cut first). */
    maxBufferedBytesTotal: positiveInt.default(64 * 1024 * 1024),
  })
  .strict();

export const runtimeSchema = z
  .object({
    /** Events kept per session for replay and join. */
    replayLimit: positiveInt.default(1000),
    /**
     * Events older than this are dropped from a session's replay ring (beyond its newest 100), ms; 0: no
     * age bound. A reconnect asks for seconds. Every relayed call's ring lives in the old generation: at
     * 120 s (the earlier default) 200 calls' rings were 60 MB of a 114 MB heap and the relay's p99 55-76 ms,
     * with rings of 100 events 50 MB and 12-23 ms (docs/notes/performance-history.md, "Replay rings and the tail").
     */
    replayMaxAgeMs: nonNegativeInt.default(30_000),
    /**
     * How long a session log's lines may wait in memory to be written together, ms; 0: one synchronous
     * write per event. A relayed call logs some 8 events a second, each its own writeSync before (3.2%
     * of the relay's main-thread CPU at 100 calls, issue 19). Closing a session and the process's exit
     * write what waits; only a kill -9, the OOM killer or a power loss loses lines (the last interval's and
     * one sweep's, 10-250 ms; docs/core-runtime.md, "Session log").
     */
    sessionLogFlushMs: z.number().int().min(0).max(10_000).default(1000),
    /** How long a closed session stays readable for replay and debugging. */
    closedRetentionMs: nonNegativeInt.default(60_000),
    /** Sessions one process holds at most. */
    maxSessions: positiveInt.default(10_000),
    /** Serialized bytes of the events kept per session for replay (besides replayLimit events). */
    replayMaxBytes: z
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** A provider whose requests fail this many times in a row fails /readyz (until one succeeds). */
    providerFailureThreshold: positiveInt.default(3),
    /** A failing provider without a new failure for this long is reported ready again (half-open), ms. */
    providerRetryAfterMs: nonNegativeInt.default(30_000),
    /**
     * How often the process checks the memory glibc's malloc holds free and gives it back to the kernel
     * (malloc_trim; native/malloc-trim), ms; 0: never. glibc returns freed memory by itself only from its
     * heap's top, so after a burst of calls the RSS would keep the peak (ops/native-memory.ts).
     */
    mallocTrimIntervalMs: z.number().int().min(0).max(3_600_000).default(10_000),
    /** Trim only when malloc holds at least this many bytes free. */
    mallocTrimMinFreeBytes: nonNegativeInt.default(8 * 1024 * 1024),
  })
  .strict();

const faultBound = (field: keyof typeof FAULT_LIMITS) =>
  z.number().int().min(FAULT_LIMITS[field][0]).max(FAULT_LIMITS[field][1]).default(FAULT_DEFAULTS[field]);

/** Provider ids tried in order when a kind's default provider fails (after its retries). */
const fallbackChain = z.array(z.string().min(1)).max(8);

/** What a call or meeting leg does when a provider fails under it (docs/core-runtime.md, "Provider faults"). */
export const faultsSchema = z
  .object({
    /** Spoken at once on a provider fault, from audio rendered at start-up by the local TTS. */
    apology: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .default("Sorry, I'm having a technical problem. One moment, please."),
    /** Spoken before a hang-up with reason provider_lost. */
    goodbye: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .default("Sorry, I can't continue this call right now. Please call back later. Goodbye."),
    /** After the apology: "reconnect" (a new provider session, the next turn retried) or "hangup" (provider_lost). */
    policy: z.enum(["reconnect", "hangup"]).default(FAULT_DEFAULTS.policy),
    /** Longest wait for a provider's first audio / text / result once due, ms. */
    firstByteTimeoutMs: faultBound("firstByteTimeoutMs"),
    /** Longest gap between two chunks of a provider stream in progress, ms. */
    interChunkTimeoutMs: faultBound("interChunkTimeoutMs"),
    /** Retries of idempotent STT / TTS / agent requests, and realtime reconnect attempts, per fault. */
    retries: faultBound("retries"),
    /** Wait before the first retry, ms; doubled for each further one. */
    retryBackoffMs: faultBound("retryBackoffMs"),
    /** Faults in a row (no answer heard between them) after which the leg hangs up whatever the policy. */
    maxConsecutiveFaults: faultBound("maxConsecutiveFaults"),
    /** Spoken when a recognizer's result or a synthesizer's first audio is holdingAfterMs late. */
    holding: z.string().trim().min(1).max(500).default("One moment, please."),
    /** How late a recognizer's result or a synthesizer's first audio may be before the holding line, ms; 0 never. */
    holdingAfterMs: faultBound("holdingAfterMs"),
    /** A retry's wait for its first byte, ms; 0: firstByteTimeoutMs. */
    retryFirstByteTimeoutMs: faultBound("retryFirstByteTimeoutMs"),
    /** An STT / TTS request with nothing from its default provider this long starts the fallback beside it, ms; 0 never. */
    hedgeAfterMs: faultBound("hedgeAfterMs"),
    /** Fallback provider ids per kind; unset: the local engines (Moonshine then pocketsphinx, espeak-ng) for STT and TTS, none for the agent. */
    fallback: z
      .object({
        stt: fallbackChain.optional(),
        tts: fallbackChain.optional(),
        agent: fallbackChain.optional(),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export const talkSchema = z
  .object({
    /** Default speech (STT / TTS) provider id. */
    provider: z.string().min(1).optional(),
    /** Speech provider settings by provider id (openai-compatible entries are checked strictly: speech-provider-schema.ts). */
    providers: speechProvidersSchema.optional(),
    realtime: z
      .object({
        provider: z.string().min(1).optional(),
        model: z.string().min(1).optional(),
        voice: z.string().min(1).optional(),
        /** The shape talk.session.create / talk.client.create give a session whose request leaves it out. */
        mode: z.enum(TALK_MODES).optional(),
        transport: z.enum(TALK_TRANSPORTS).optional(),
        brain: z.enum(TALK_BRAINS).optional(),
        /** Realtime provider settings by provider id (known ids strictly: realtime-provider-schema.ts). */
        providers: realtimeProvidersSchema.optional(),
      })
      .strict()
      .refine(
        (r) =>
          CREATION_MATRIX.some(
            (c) =>
              (r.mode === undefined || c.mode === r.mode) &&
              (r.transport === undefined || c.transport === r.transport) &&
              (r.brain === undefined || c.brain === r.brain),
          ),
        {
          message:
            "mode / transport / brain: no supported session has this shape (docs/api.md, creation matrix)",
        },
      )
      .optional(),
    input: z
      .object({
        /** Caller speech interrupts assistant output (barge-in). */
        interruptOnSpeech: z.boolean().default(true),
        /** Silence that ends a user turn, ms. */
        silenceTimeoutMs: positiveInt.default(800),
        /**
         * input.audio.appended events (caller audio that reached the realtime provider or the recognizer)
         * are coalesced to one per this many ms of audio. 0 reports every append (a phone frame: 20 ms).
         */
        appendedEventIntervalMs: z.number().int().min(0).max(10_000).default(1000),
        /**
         * The caller's audio goes to a realtime provider in pieces of this many ms: one append per
         * piece instead of one per 20 ms phone frame (the largest per-frame cost of a relayed call after
         * reading the frame). The provider hears a piece's oldest frame up to this minus 20 ms later;
         * talkgate's own speech gate reads every frame as it comes. 0 sends every frame on its own.
         */
        providerAppendMs: z.number().int().min(0).max(500).default(60),
        /**
         * Echo cancellation of the caller's audio with the assistant's played audio as the reference, before
         * the local speech gate and STT (stt-tts phone legs; realtime ones with `realtime`).
         */
        echoCancellation: z
          .object({
            enabled: z.boolean().default(true),
            /** Longest echo path covered (line delay + response), ms. */
            tailMs: z.number().int().min(20).max(1000).default(300),
            /** Also suppress stationary noise. */
            denoise: z.boolean().default(false),
            /**
             * Let a caller talking over the answer through the echo guard where the played audio does not
             * explain the canceller's output (a coherence test), instead of waiting for a dip in the answer.
             * Unset: on, except with bargeIn.confirmWithWords, where it lets the recognizer hear (and mishear)
             * backchannels and noise it would otherwise not (app/pipelines.ts).
             */
            doubleTalk: z.boolean().optional(),
            /**
             * Also let a frame under the echo guard's bar through where the Silero VAD hears speech in the
             * canceller's output and the canceller's measured attenuation and the coherence agree it is not
             * echo (voice/media/echo-guard.ts; measured on the talker-to-echo grid, docs/performance.md).
             * Unset: on where the Silero model loads (a warning where it does not); set true, a process that
             * cannot load it is refused at start.
             */
            residualVad: z.boolean().optional(),
            /**
             * With doubleTalk, also let a frame under the echo guard's bar through where the canceller's output
             * holds a voice at a pitch the played audio around the echo's delay does not have: the caller over a
             * voiced echo as loud as they are (voice/media/foreign-pitch.ts; docs/performance.md).
             */
            foreignVoice: z.boolean().default(true),
            /**
             * With doubleTalk and residualVad, also let a frame under the echo guard's bar through where the played
             * audio around the echo's delay is voiced and the canceller's output holds none of its pitch, the VAD
             * hears speech in it and the played audio explains little of it: the canceller took the echo out and left
             * the caller (voice/media/double-talk.ts, echoPitchGone; docs/performance.md).
             */
            echoPitchGone: z.boolean().default(true),
            /**
             * Also on realtime phone calls: the caller's audio is decoded, cleaned and sent to the provider as
             * PCM (no u-law passthrough), and talkgate's gate, not the provider's speech_started, decides barge-in.
             */
            realtime: z.boolean().default(false),
          })
          .strict()
          .prefault({}),
        /** Which caller speech over an answer interrupts it (voice/pipelines/barge-in-policy.ts). */
        bargeIn: z
          .object({
            /** Words that only acknowledge: an utterance of nothing else does not interrupt (with confirmWithWords). */
            backchannels: z
              .array(
                z
                  .string()
                  .min(1)
                  .max(40)
                  .regex(/[a-z0-9]/i, "needs at least one word"),
              )
              .max(100)
              .optional(),
            /** Hold the answer at the speech onset and let the recognizer's words decide (stt-tts). */
            confirmWithWords: z.boolean().default(false),
            /** After held speech ended with no interrupting word, how long its recognizer may still give one, ms. */
            resumeAfterMs: z.number().int().min(100).max(5000).default(1200),
            /** The longest an answer is held while the caller speaks with no interrupting word, ms (>= resumeAfterMs). */
            maxHoldMs: z.number().int().min(100).max(30_000).optional(),
            /** Also count as a backchannel a one- or two-word utterance that sounds like one (by pronunciations). */
            matchBySound: z.boolean().default(true),
            /** CMU-format pronunciation dictionary for matchBySound. Default: Debian's (pocketsphinx-en-us) if installed. */
            pronunciations: z.string().min(1).optional(),
          })
          .strict()
          .refine((b) => b.maxHoldMs === undefined || b.maxHoldMs >= b.resumeAfterMs, {
            message: "maxHoldMs must not be below resumeAfterMs",
            path: ["maxHoldMs"],
          })
          .prefault({}),
        /**
         * Who ends the caller's turn on a realtime phone call: "provider" (its server VAD ends it and answers)
         * or "talkgate" (provider turn detection off; talkgate's endpoint commits the audio and asks for the answer).
         */
        turnEnd: z.enum(["provider", "talkgate"]).default("provider"),
        /** How much silence ends a caller's turn (voice/speech/end-of-turn.ts). */
        endOfTurn: z
          .object({
            /** "fixed": silenceTimeoutMs; "adaptive": shorter after a finished sentence, longer after "and" / "um". */
            mode: z.enum(["fixed", "adaptive"]).default("fixed"),
            /** Silence after a finished sentence, ms. */
            minMs: z.number().int().min(100).max(5000).multipleOf(10).default(300),
            /** Silence after a filler or a trailing conjunction, ms. */
            maxMs: z.number().int().min(100).max(10_000).multipleOf(10).default(1500),
            /**
             * Start the agent's answer once the caller has been quiet as long as the adaptive rule would wait
             * after their words, before the endpoint ends the turn; used only if the turn ends with the same
             * words (otherwise dropped, its tokens spent). The fixed endpoint's cut-offs, a sooner answer.
             */
            prepareAnswer: z.boolean().default(true),
          })
          .strict()
          .refine((e) => e.maxMs >= e.minMs, { message: "maxMs must not be below minMs", path: ["maxMs"] })
          .prefault({}),
        /**
         * The local speech gate's detector: "webrtc" (the WebRTC VAD gated by a tracked noise floor) or
         * "silero" (the Silero VAD in onnxruntime-node, model from an npm package; docs/codecs.md).
         */
        vad: z.enum(["webrtc", "silero"]).default("webrtc"),
        /** Noise suppression (libspeexdsp's preprocessor) of every media leg's caller audio before VAD and STT. */
        noiseSuppression: z
          .object({
            enabled: z.boolean().default(false),
            /** "speexdsp" (the preprocessor, cheap) or "rnnoise" (fewer word errors, ~50x the CPU). */
            engine: z.enum(["speexdsp", "rnnoise"]).default("speexdsp"),
            /** Most attenuation applied to noise, dB (speexdsp). */
            suppressDb: z.number().int().min(-90).max(-1).default(-30),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    output: z
      .object({
        /**
         * output.audio.delta events of one answer are coalesced to at most one per this many ms
         * (metadata only; the audio itself is never delayed). 0 reports every provider chunk.
         */
        deltaEventIntervalMs: z.number().int().min(0).max(10_000).default(200),
      })
      .strict()
      .prefault({}),
    /** The embedded local engines (the default speech providers when no other is configured). */
    local: z
      .object({
        pocketsphinx: z
          .object({
            /** "resident": decoders that keep the models loaded; "per-stream": one process per stream. */
            decoder: z.enum(["resident", "per-stream"]).optional(),
            /** "fast" (resident default) or "full" (pocketsphinx's own settings, per-stream default). */
            search: z.enum(["fast", "full"]).optional(),
            /** Resident decoders kept loaded while idle (~88 MB each). */
            maxIdleDecoders: nonNegativeInt.optional(),
            /** An idle resident decoder exits after this long, ms. */
            idleTimeoutMs: positiveInt.optional(),
            /** Acoustic model directory, language model and dictionary (default: Debian's en-us). */
            hmm: z.string().min(1).optional(),
            lm: z.string().min(1).optional(),
            dict: z.string().min(1).optional(),
            /** Resident: load the dictionary restricted to the language model's words (default true, ~13 MB less). */
            lmOnlyDict: z.boolean().optional(),
            /** Resident: inside an utterance, the running hypothesis every this much audio, ms (0: at its end only). */
            partialIntervalMs: z.number().int().min(0).max(10_000).optional(),
          })
          .strict()
          .prefault({}),
        /**
         * The Moonshine recognizer, the default STT (pocketsphinx when its model cannot be found): the
         * English tiny model of the `@usefulsensors/moonshine-js` npm package.
         */
        moonshine: z
          .object({
            /** A running hypothesis every this much new audio, ms; 0: the final text only. Default 500. */
            partialIntervalMs: z.number().int().min(0).max(10_000).optional(),
            /** Audio decoded in one piece at most, s. Default 20. */
            segmentSeconds: z.number().min(5).max(30).optional(),
            /** onnxruntime threads of the model's thread. Default 1. */
            threads: z.number().int().min(1).max(16).optional(),
            /** Directory of encoder_model.onnx and decoder_model_merged.onnx (default: the npm package's). */
            modelDir: z.string().min(1).optional(),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** The one failure path of call and meeting legs. */
    faults: faultsSchema.prefault({}),
  })
  .strict();

export const agentSchema = z
  .object({
    /**
     * An OpenAI-compatible streaming chat completions endpoint (the assistant's
     * own gateway, a hosted model or a local server). Unset: the local
     * rule-based agent answers.
     */
    endpoint: z
      .object({
        baseUrl: z.url(),
        model: z.string().min(1),
        apiKey: secret(z.string().min(1)).optional(),
        /** Upper bound on one consult, ms. */
        timeoutMs: positiveInt.default(120_000),
        /** Ask for each answer's token counts (stream_options.include_usage); false for a server that refuses it. */
        streamUsage: z.boolean().default(true),
      })
      .strict()
      .optional(),
    /** The assistant's persona, the start of every Gateway-built instruction. */
    persona: z
      .string()
      .min(1)
      .default("You are a helpful voice assistant. Answer briefly, in plain spoken language."),
    tools: z
      .object({
        /** Tool names allowed ("*" for all). Deny wins over allow. */
        allow: z.array(z.string().min(1)).default(["*"]),
        deny: z.array(z.string().min(1)).default([]),
        /**
         * How long a tool call completed by a client (talk.session.submitToolResult)
         * waits for its result, ms; then the provider gets a `timeout` tool error.
         */
        clientResultTimeoutMs: z.number().int().min(100).max(600_000).default(120_000),
        /** Tool calls of one client-owned session (talk.client.toolCall) running at once; one more is rate_limited. */
        maxParallelPerSession: z.number().int().min(1).max(64).default(4),
        /**
         * The tools a direct-tools session's surface may call (talk.session.callTool),
         * a selection inside allow / deny above: default none. agent_consult is
         * never one (a direct-tools turn involves no agent).
         */
        direct: z
          .object({
            allow: z.array(z.string().min(1)).default([]),
            deny: z.array(z.string().min(1)).default([]),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** How a streamed answer is cut for speech (smart chunker); each chunk goes to TTS as soon as it is complete. */
    chunker: z
      .object({
        /** false: speak the whole answer once it is complete (no early speech). */
        enabled: z.boolean().default(true),
        minChars: positiveInt.default(120),
        maxChars: positiveInt.default(400),
        /** A shorter first chunk starts speech early. */
        firstChunkMinChars: positiveInt.default(20),
        firstChunkMaxChars: positiveInt.default(200),
      })
      .strict()
      .prefault({}),
    /** Chunks synthesized ahead of the one playing. */
    ttsPrefetch: nonNegativeInt.default(1),
    /** A consult that has produced nothing to say after this long gets progressCueText spoken, ms; 0 never. */
    progressCueMs: nonNegativeInt.default(2500),
    progressCueText: z.string().min(1).default("One moment..."),
    /** Longest consult before it is aborted and apologyText spoken (plus a tool.error event), ms; 0 no limit. */
    consultTimeoutMs: nonNegativeInt.default(60_000),
    apologyText: z
      .string()
      .min(1)
      .default("Sorry, that is taking me too long. Please ask me again in a moment."),
    /** stt-tts: rounds of function calls one answer may make before it must be text; one more fails the turn. */
    maxToolRounds: z.number().int().min(0).max(20).default(4),
    /** stt-tts: spoken when a tool failed and the agent then said nothing. */
    toolErrorText: z.string().min(1).default("Sorry, that did not work."),
    /** Destinations transfer_call may use, by name: {"front desk": "+15551230000"}. The model picks a name, never a number. */
    transferTargets: z.record(z.string().min(1), z.string().min(1)).default({}),
    /** collect_digits: defaults of the keypad-input tool. */
    collectDigits: z
      .object({
        /** Give up this long after the start or the last key, ms. */
        timeoutMs: z.number().int().min(1000).max(60_000).default(10_000),
        /** Caller speech ends the collection (the caller answered aloud). */
        cancelOnSpeech: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    realtime: z
      .object({
        /**
         * Who hears the caller and plans replies in Gateway-owned realtime sessions
         * that name none (talk.session.create replyPath): native (the provider),
         * bridge (the local STT hears, the provider plans with the canonical tools)
         * or brain (the local STT hears, the agent plans; the provider is speech
         * transport only: no tools, no responses of its own). docs/brain.md.
         */
        replyPath: z.enum(["native", "bridge", "brain"]).default("native"),
        /** Speak agent_consult's answer chunk by chunk while it runs (seed 002's progressive pattern). */
        progressive: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export const clusterSchema = z
  .object({
    /** What this worker runs: "media" (calls, Gateway sessions, outbound-call jobs), "bot" (meeting-bot jobs). */
    roles: z
      .array(z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, "a role is lowercase letters, digits and dashes"))
      .min(1)
      .default(["media"]),
    /** Unique id of this worker; default `<hostname>-<pid>-<random>`. */
    workerId: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/, "letters, digits, '.', '_', '-', ':' (1-128)")
      .optional(),
    /** Session lease time-to-live, seconds: a dead worker's sessions close everywhere within about this long. */
    leaseTtlSec: positiveInt.default(10),
    /** SIGTERM drain: how long running sessions and jobs may continue before the process exits, ms. */
    drainTimeoutMs: nonNegativeInt.default(60_000),
    /** Bounded wait of a verb sent to another worker before owner_unreachable, ms. */
    commandTimeoutMs: positiveInt.default(2000),
    /** Jobs (BullMQ with Redis): retries of failing handlers and BullMQ's stalled-job rules. */
    jobs: z
      .object({
        /** Jobs of one kind this worker runs at once (an outbound-call job lasts its whole call). */
        concurrency: positiveInt.default(1),
        /** Runs of a job whose handler fails before the job is failed (a stall is not an attempt). */
        attempts: positiveInt.default(2),
        /** Wait before a retry: fixed delayMs, or exponential delayMs * 2^(attempt-1). */
        backoff: z
          .object({
            type: z.enum(["fixed", "exponential"]).default("exponential"),
            delayMs: positiveInt.default(1000),
          })
          .strict()
          .prefault({}),
        /** Lock of a running job, renewed every half of it; a dead worker's job can stall once it lapses. */
        lockDurationMs: z.number().int().min(1000).default(30_000),
        /** How often each worker looks for stalled jobs. */
        stalledIntervalMs: z.number().int().min(100).default(30_000),
        /** Stalls a job survives (back to wait, run again); one more fails it. 0: the first stall fails it. */
        maxStalledCount: nonNegativeInt.default(1),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** Exactly an http(s) origin: scheme, host and port, no path, query or trailing slash. */
function isHttpOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
}

/** A driver's test origins (tests and development only): exact http(s) origins, at most 16. */
function testOrigins() {
  return z
    .array(
      z
        .string()
        .refine(
          isHttpOrigin,
          "must be an origin such as http://127.0.0.1:8080 (scheme, host, port; no path or trailing slash)",
        ),
    )
    .max(16)
    .default([]);
}

/** Meeting bots (src/meetings): timers, browser, webhook. Durations in ms. */
export const meetingsSchema = z
  .object({
    /** Chromium executable the bots launch. */
    chromiumPath: z.string().min(1).default("/usr/bin/chromium"),
    /** Bots one worker runs at once. */
    maxBots: positiveInt.default(4),
    /** Time in a waiting room before giving up (ended/waiting_room_timeout). */
    waitingRoomTimeoutMs: positiveInt.default(600_000),
    /** Time the bot stays once nobody else is in the meeting (ended/left_alone). */
    aloneTimeoutMs: nonNegativeInt.default(30_000),
    /** Time without participant speech before leaving (ended/silence_timeout); 0 never. */
    silenceTimeoutMs: nonNegativeInt.default(1_800_000),
    /** Longest stay (ended/max_duration). */
    maxDurationMs: positiveInt.default(14_400_000),
    /** Launch to waiting room or call, else fatal/blocked_by_platform. */
    joinTimeoutMs: positiveInt.default(60_000),
    /** In the call without the page's capture socket, else fatal/capture_failed. */
    captureTimeoutMs: positiveInt.default(15_000),
    /** How often the platform driver reads the page. */
    pollIntervalMs: z.number().int().min(10).default(500),
    /** An unrecognised screen during the join this long is saved (screenshot, with the bot's record) and reloaded. */
    unknownScreenMs: z.number().int().min(100).default(15_000),
    /** Reloads for unrecognised screens per bot; then fatal/blocked_by_platform. */
    unknownScreenRetries: nonNegativeInt.default(2),
    /** Screens saved with a bot's record (PNG + what the page showed): "unknown" ones, or "all" (the probe). */
    recordScreens: z.enum(["unknown", "all"]).default("unknown"),
    /** The bots' browser: "headed" on an Xvfb display (what the platforms need), or "headless" (development). */
    browser: z.enum(["headed", "headless"]).default("headed"),
    /** Headed bots: one Xvfb display shared by the process's bots, or one per bot. */
    display: z.enum(["shared", "per-bot"]).default("shared"),
    /** Non-speech that ends a caption line (multiple of 10). */
    utteranceSilenceMs: z.number().int().min(100).multipleOf(10).default(600),
    /** Longest caption line before it is cut. */
    maxUtteranceMs: z.number().int().min(1000).default(20_000),
    /** Send PCM16 from the page even where WebCodecs Opus works (diagnostics). */
    forcePcm: z.boolean().default(false),
    /** Agent mode: wake triggers until voicewake.set persists others (<dataDir>/settings/voicewake.json). */
    wakeTriggers: z.array(z.string().trim().min(1).max(64)).min(1).max(32).default(["talkgate", "computer"]),
    /** Agent mode: after a wake phrase alone, the same speaker's next caption within this time is the question. */
    wakeWindowMs: positiveInt.default(10_000),
    /** Agent mode: speech over the assistant must last this long to interrupt it; shorter is dropped as echo. */
    bargeInMs: z.number().int().min(20).default(300),
    /** Agent mode: speech is still gated this long after the assistant stops (echo tail). */
    echoTailMs: nonNegativeInt.default(300),
    /**
     * The local test meeting (/meetings/test-room/<room>, development and tests). Its socket
     * needs a write token when auth is on.
     */
    testRoom: z
      .object({
        /** Serve it. Default: on only when auth is off (no auth.tokens) and server.host is loopback. */
        enabled: z.boolean().optional(),
        /** Sockets in one room; more are refused with 1013. */
        maxSocketsPerRoom: positiveInt.default(16),
        /** Sockets in all rooms; more are refused with 1013. */
        maxSockets: positiveInt.default(128),
        /** Largest signalling message, bytes; larger closes the socket with 1009. */
        maxMessageBytes: z
          .number()
          .int()
          .min(1024)
          .default(64 * 1024),
      })
      .strict()
      .prefault({}),
    /** Extra Chromium flags for every bot (`--name` or `--name=value`), after the built-in ones. */
    chromiumArgs: z
      .array(z.string().regex(/^--[a-z0-9-]+(=.*)?$/i, "must be a --flag"))
      .max(32)
      .default([]),
    /** Cluster: how often a follower of a bot on another worker reads its new lines from Redis. */
    followPollMs: z.number().int().min(50).default(500),
    /** The bot camera (POST /meetings/bots `camera`). */
    camera: z
      .object({
        /** Origins (`https://status.example.com`) whose pages `camera: "url"` may show; none by default. */
        urlOrigins: z
          .array(z.string().refine(isHttpOrigin, "must be an http(s) origin: scheme://host[:port]"))
          .max(64)
          .default([]),
        /** Frames a second of the card / URL page sent as the camera. */
        fps: z.number().int().min(1).max(30).default(2),
      })
      .strict()
      .prefault({}),
    /** Receive participants' video (the bot shows none); false answers every video section as not receiving. */
    receiveVideo: z.boolean().default(false),
    /** The meeting's chat: read into the transcript; messages addressed to the bot answered there. */
    chat: z
      .object({
        enabled: z.boolean().default(true),
        /** Agent mode: answers to chat questions are also spoken. */
        speakAnswers: z.boolean().default(true),
        /** Agent mode: answers to spoken questions are also posted in the chat, as heard. */
        postSpokenAnswers: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    /** Google Meet driver. */
    googleMeet: z
      .object({
        /**
         * Tests and development only: origins (http://127.0.0.1:8080) the Google Meet driver also
         * accepts, any path, to run bots against a local server of saved Meet pages.
         */
        testOrigins: testOrigins(),
      })
      .strict()
      .prefault({}),
    /** Zoom web client driver. */
    zoom: z
      .object({
        /** Tests and development only: origins the Zoom driver also accepts, any path (a simulator). */
        testOrigins: testOrigins(),
        /**
         * "Host has not started" (error 3,001): the page is loaded again every `reloadMs`, at
         * most `maxReloads` times, then the bot ends (ended/host_not_started). Vexa waits 15 s
         * between reloads, 10 minutes in all.
         */
        hostNotStarted: z
          .object({
            reloadMs: z.number().int().min(500).default(15_000),
            maxReloads: nonNegativeInt.default(40),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    /** Microsoft Teams web driver. */
    teams: z
      .object({
        /** Tests and development only: origins the Teams driver also accepts, any path (a simulator). */
        testOrigins: testOrigins(),
        /** How long the capture waits for Teams' one mixed `mainAudio` stream before capturing every track. */
        mainAudioGraceMs: positiveInt.default(15_000),
      })
      .strict()
      .prefault({}),
    /** Lifecycle webhook: POST per state change, signed with HMAC-SHA256. */
    webhook: z
      .object({
        url: z.url(),
        /** whsec_<base64 of 24..64 bytes> (Standard Webhooks), or any string of 16+ characters. */
        secret: secret(z.string().min(16)),
        /** Still signed with during a rotation. */
        previousSecrets: z
          .array(secret(z.string().min(16)))
          .max(4)
          .default([]),
        /** Event types sent. */
        events: z
          .array(z.enum(["meeting.bot.state", "meeting.transcript.line"]))
          .default(["meeting.bot.state", "meeting.transcript.line"]),
        maxAttempts: positiveInt.default(5),
        initialBackoffMs: nonNegativeInt.default(500),
        timeoutMs: positiveInt.default(5000),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A provider's (or carrier's) prices, for the usage ledger's cost estimate; every field optional. */
const priceSchema = z
  .object({
    /** Per 1 000 input tokens (usage.metrics inputTokens). */
    inputTokensPer1k: z.number().nonnegative().optional(),
    /** Per 1 000 output tokens. */
    outputTokensPer1k: z.number().nonnegative().optional(),
    /** Per minute of audio transcribed (STT). */
    sttPerMinute: z.number().nonnegative().optional(),
    /** Per 1 000 characters synthesized (TTS). */
    ttsPer1kChars: z.number().nonnegative().optional(),
    /** Per minute of session (a carrier's per-minute rate, keyed by carrier id). */
    perMinute: z.number().nonnegative().optional(),
  })
  .strict();

const retentionDays = z.number().int().min(0).max(36_500);

export const opsSchema = z
  .object({
    usage: z
      .object({
        /** Prices by provider id or carrier id; the cost estimate is their sum (0 for what has no price). */
        prices: z.record(z.string().min(1).max(128), priceSchema).default({}),
        /** Named beside each estimate. */
        currency: z.string().min(1).max(8).default("USD"),
      })
      .strict()
      .prefault({}),
    /** Days each kind of file under dataDir is kept (0 = forever), swept at start and every hour. */
    retentionDays: z
      .object({
        /** sessions/<id>.jsonl event logs. */
        sessionLogs: retentionDays.default(30),
        /** meetings/<botId>.transcript.jsonl. */
        transcripts: retentionDays.default(90),
        /** recordings/ (any file in it). */
        recordings: retentionDays.default(30),
        /** usage/<day>.<worker>.jsonl ledger files. */
        ledger: retentionDays.default(400),
      })
      .strict()
      .prefault({}),
    /**
     * How often the event loop's delay is sampled for `nodejs_eventloop_lag_*`, ms. Each sample wakes the
     * loop: at 10 (prom-client's default, kept) an idle worker spends 5.0-7.0 ms of CPU a second, at 50 2.3-2.7
     * (docs/notes/performance-history.md, "An idle worker's CPU"). Node's histogram records the whole interval between
     * samples, so the gauges' floor is this interval: raising it moves the floor, and alerts with it.
     */
    eventLoopSampleMs: z.number().int().min(1).max(1000).default(10),
  })
  .strict();

export const configSchema = z
  .object({
    server: serverSchema.prefault({}),
    auth: z
      .object({ tokens: z.array(tokenSchema).default([]) })
      .strict()
      .prefault({}),
    gateway: gatewaySchema.prefault({}),
    runtime: runtimeSchema.prefault({}),
    /** Where session logs (sessions/<id>.jsonl) and other state live. */
    dataDir: z.string().min(1).default("./data"),
    log: z
      .object({
        level: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
        /**
         * "auto": readable lines when standard output is a terminal, JSON lines otherwise; "json" or
         * "pretty" always. Env LOG_FORMAT.
         */
        format: z.enum(["auto", "json", "pretty"]).default("auto"),
      })
      .strict()
      .prefault({}),
    redis: z
      .object({
        /** redis:// URL; unset means in-process coordination (one process). */
        url: z
          .string()
          .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
          .optional(),
        /** Prefix of every key this deployment writes. */
        keyPrefix: z.string().min(1).default("talkgate:"),
        /**
         * The redis-server a `serve --workers N` pool without `url` runs for its processes (a path, or a
         * name looked up on PATH). Not used when `url` is set or with one worker.
         */
        poolServer: z.string().min(1).default("redis-server"),
      })
      .strict()
      .prefault({}),
    cluster: clusterSchema.prefault({}),
    talk: talkSchema.prefault({}),
    agent: agentSchema.prefault({}),
    telephony: telephonySchema.prefault({}),
    meetings: meetingsSchema.prefault({}),
    /** Operations: usage prices and file retention (docs/operations.md). */
    ops: opsSchema.prefault({}),
  })
  .strict();

/** The validated, defaulted configuration. */
export type TalkgateConfig = z.infer<typeof configSchema>;
/** What a config file may contain (everything optional). */
export type TalkgateConfigInput = z.input<typeof configSchema>;
export type Scope = (typeof SCOPES)[number];
