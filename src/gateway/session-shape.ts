import { TalkError } from "../core/index.js";
import { CREATION_MATRIX } from "../core/index.js";
import type { TalkBrain, TalkMode, TalkSessionOwner, TalkTransport } from "../core/index.js";

/** A session's shape as requested or configured: each field optional. */
export interface SessionShapeInput {
  mode?: TalkMode | undefined;
  transport?: TalkTransport | undefined;
  brain?: TalkBrain | undefined;
}

export interface SessionShape {
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
}

/**
 * Fills the fields a create request leaves out, in the order mode, transport,
 * brain: the configured default (`talk.realtime.mode` / `.transport` /
 * `.brain`) when the creating method can create a session with it, else the
 * one value the method's combinations leave, else the built-in default
 * (`realtime`; `agent-consult`, `none` for transcription). A requested field
 * is never replaced; the caller checks the result against the matrix as
 * before, so a bad explicit combination keeps its error code. A transport
 * that nothing decides is `invalid_params`.
 */
export function resolveSessionShape(
  requested: SessionShapeInput,
  configured: SessionShapeInput,
  owner: TalkSessionOwner,
): SessionShape {
  let candidates = CREATION_MATRIX.filter(
    (c) =>
      c.owner === owner &&
      (requested.mode === undefined || c.mode === requested.mode) &&
      (requested.transport === undefined || c.transport === requested.transport) &&
      (requested.brain === undefined || c.brain === requested.brain),
  );
  const pick = <K extends keyof SessionShape>(
    field: K,
    builtIn: SessionShape[K] | undefined,
  ): SessionShape[K] | undefined => {
    const given = requested[field] as SessionShape[K] | undefined;
    if (given !== undefined) return given;
    const values: SessionShape[K][] = [...new Set(candidates.map((c) => c[field] as SessionShape[K]))];
    const wanted = configured[field] as SessionShape[K] | undefined;
    const chosen =
      wanted !== undefined && values.includes(wanted)
        ? wanted
        : values.length === 1
          ? values[0]
          : values.length === 0
            ? (wanted ?? builtIn)
            : builtIn === undefined
              ? undefined
              : values.includes(builtIn)
                ? builtIn
                : values[0];
    if (chosen !== undefined) candidates = candidates.filter((c) => c[field] === chosen);
    return chosen;
  };
  const mode = pick("mode", "realtime") ?? "realtime";
  const transport = pick("transport", undefined);
  if (transport === undefined) {
    throw new TalkError("invalid_params", "transport is required (no talk.realtime.transport applies).", {
      details: { issues: [{ path: "transport", message: "required" }] },
    });
  }
  const brain = pick("brain", mode === "transcription" ? "none" : "agent-consult") ?? "agent-consult";
  return { mode, transport, brain };
}
