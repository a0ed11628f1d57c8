import type { TalkSession } from "../../core/index.js";
import type { TalkEventInitOf, TalkEventType } from "../../core/index.js";

export interface SpeakerOfTurn {
  (turnId: string): { speaker: string; trackId: string; rtpSource?: number } | undefined;
}

/**
 * The session as the transcription pipeline sees it: every `transcript.*`
 * event it emits gets `speaker` (and `trackId`, and `rtpSource` when an RTP
 * source decided it) in its payload. Core's
 * pipeline knows nothing of participants, and must not; the meeting adapter
 * owns the turn -> participant mapping, so it adds the name on the way out.
 * Everything else is the session itself (methods bound to it, so its private
 * state works).
 */
export function speakerTaggedSession(session: TalkSession, speakerOf: SpeakerOfTurn): TalkSession {
  const emit: TalkSession["emit"] = <T extends TalkEventType>(init: TalkEventInitOf<T>) => {
    if (init.type.startsWith("transcript.") && init.turnId !== undefined) {
      const who = speakerOf(init.turnId);
      const payload = {
        ...init.payload,
        speaker: who?.speaker ?? "unknown",
        ...(who ? { trackId: who.trackId } : {}),
        ...(who?.rtpSource !== undefined ? { rtpSource: who.rtpSource } : {}),
      };
      return session.emit({ ...init, payload });
    }
    return session.emit(init);
  };
  return new Proxy(session, {
    get(target, property) {
      if (property === "emit") return emit;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
