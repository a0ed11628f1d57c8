/**
 * The configurations the turn-taking bench compares in one run. The baseline
 * is today's gate alone (echo cancellation off); the rest layer config keys
 * over the defaults. Keys that the config schema does not know yet (work in
 * progress elsewhere) are refused by it (strict zod), and such a
 * configuration is skipped with a line saying so, so this table can name them
 * before they land. More come from --config-json.
 */
import { validateConfig } from "../../src/config/load-config.js";

export interface TurnConfig {
  id: string;
  label: string;
  /** Merged into the server's `talk` config. */
  talk?: Record<string, unknown>;
  /** Merged into the server's `telephony` config (e.g. `vad`). */
  telephony?: Record<string, unknown>;
  /**
   * The calls' mode. Default "stt-tts". "realtime": the answer is the OpenAI Realtime stand-in's
   * (test/support/fake-openai-realtime-server.ts, its energy VAD standing in for server VAD), one call
   * at a time (the stand-in serves one socket).
   */
  mode?: "stt-tts" | "realtime";
  /** Run by another checkout's server (--baseline: today's code beside the change). */
  checkout?: string;
}

const ECHO_OFF = { echoCancellation: { enabled: false } };

export const TURN_CONFIGS: readonly TurnConfig[] = [
  {
    id: "baseline",
    label: "today's gate, echo cancellation off (baseline)",
    talk: { input: ECHO_OFF },
  },
  {
    id: "ec",
    label: "echo cancellation on (default)",
    talk: { input: { echoCancellation: { enabled: true } } },
  },
  {
    // The echo guard before its double-talk test: a frame under the echo's bar waits for a dip in the answer.
    id: "ec-no-double-talk",
    label: "echo cancellation, no double-talk test",
    talk: { input: { echoCancellation: { enabled: true, doubleTalk: false } } },
  },
  {
    id: "ec-denoise",
    label: "echo cancellation + speex denoise",
    talk: { input: { echoCancellation: { enabled: true, denoise: true } } },
  },
  { id: "silero", label: "echo cancellation + Silero VAD", talk: { input: { vad: "silero" } } },
  {
    id: "noise-suppression",
    label: "echo cancellation + noise suppression (speexdsp)",
    talk: { input: { noiseSuppression: { enabled: true } } },
  },
  {
    // The backchannel filter and the false-interruption resume act only when words decide (confirmWithWords).
    id: "confirm-words",
    label: "echo cancellation + barge-in confirmed by words (backchannels and no words resume)",
    talk: { input: { bargeIn: { confirmWithWords: true } } },
  },
  {
    // The end-of-turn rules named, whichever is the default: fixed-eot beside adaptive-eot (issue 40).
    id: "fixed-eot",
    label: "echo cancellation + fixed end of turn (800 ms)",
    talk: { input: { endOfTurn: { mode: "fixed" } } },
  },
  {
    // The fixed endpoint without the answer prepared ahead of it (talk.input.endOfTurn.prepareAnswer off).
    id: "fixed-eot-unprepared",
    label: "echo cancellation + fixed end of turn (800 ms), the answer not prepared",
    talk: { input: { endOfTurn: { mode: "fixed", prepareAnswer: false } } },
  },
  {
    id: "adaptive-eot",
    label: "echo cancellation + adaptive end of turn",
    talk: { input: { endOfTurn: { mode: "adaptive" } } },
  },
  {
    id: "all",
    label: "echo cancellation + words confirm + adaptive end of turn + Silero VAD",
    talk: {
      input: { vad: "silero", bargeIn: { confirmWithWords: true }, endOfTurn: { mode: "adaptive" } },
    },
  },
];

/**
 * Realtime calls (issue 15's realtime path): run only when named in --configs. Passthrough is today's
 * default (the provider's VAD decides barge-in on the raw line); rt-ec cancels the echo and decides locally.
 */
export const REALTIME_TURN_CONFIGS: readonly TurnConfig[] = [
  { id: "rt-passthrough", label: "realtime, u-law passthrough (default)", mode: "realtime" },
  {
    id: "rt-ec",
    label: "realtime, echoCancellation.realtime",
    mode: "realtime",
    talk: { input: { echoCancellation: { realtime: true } } },
  },
  {
    id: "rt-talkgate",
    label: "realtime, echoCancellation.realtime + turnEnd talkgate, fixed end of turn",
    mode: "realtime",
    talk: {
      input: { echoCancellation: { realtime: true }, turnEnd: "talkgate", endOfTurn: { mode: "fixed" } },
    },
  },
  {
    id: "rt-talkgate-adaptive",
    label: "realtime, echoCancellation.realtime + turnEnd talkgate, adaptive end of turn",
    mode: "realtime",
    talk: {
      input: { echoCancellation: { realtime: true }, turnEnd: "talkgate", endOfTurn: { mode: "adaptive" } },
    },
  },
];

/** --config-json: one configuration object or an array of them ({ id, label?, talk?, telephony? }). */
export function parseConfigJson(text: string): TurnConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`--config-json is not JSON: ${(err as Error).message}`);
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return list.map((c, i) => {
    const o = c as Partial<TurnConfig> | null;
    if (typeof o !== "object" || o === null || typeof o.id !== "string" || o.id === "")
      throw new Error(`--config-json entry ${i} needs a non-empty "id"`);
    for (const key of Object.keys(o))
      if (!["id", "label", "talk", "telephony", "mode"].includes(key))
        throw new Error(
          `--config-json entry "${o.id}": unknown field "${key}" (id, label, talk, telephony, mode)`,
        );
    if (o.mode !== undefined && o.mode !== "stt-tts" && o.mode !== "realtime")
      throw new Error(`--config-json entry "${o.id}": mode must be "stt-tts" or "realtime"`);
    return {
      id: o.id,
      label: o.label ?? o.id,
      ...(o.mode ? { mode: o.mode } : {}),
      ...(o.talk ? { talk: o.talk } : {}),
      ...(o.telephony ? { telephony: o.telephony } : {}),
    };
  });
}

/** Why today's schema refuses `config`, or undefined when it accepts it. */
export function refusal(config: TurnConfig): string | undefined {
  try {
    validateConfig({
      talk: config.talk ?? {},
      telephony: { defaultMode: "stt-tts", ...(config.telephony ?? {}) },
    });
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: string }).code;
    return code ? `${code}: ${message}` : message;
  }
}
