import { TalkError } from "../core/index.js";
import { hasDirectTools } from "../voice/index.js";
import type { TalkSessionController } from "../voice/index.js";
import type { TalkSession } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type {
  PlaybackPosition,
  SessionDescription,
  SessionJoinResult,
  TalkParsedParams,
  TalkResult,
} from "./protocol/talk-methods.js";
import { joinerReplay, type SessionOwnership, type SessionPeer } from "./session-owners.js";

type Verb<
  M extends
    | "appendAudio"
    | "startTurn"
    | "endTurn"
    | "cancelTurn"
    | "cancelOutput"
    | "submitToolResult"
    | "callTool"
    | "close",
> = (params: TalkParsedParams<`talk.session.${M}`>) => Promise<TalkResult<`talk.session.${M}`>>;

/** A join accepted: the response, and what to run once it was sent (event delivery, session.ready). */
export interface JoinOutcome {
  result: SessionJoinResult;
  start(): void;
}

/**
 * One Gateway session as a request sees it, resolved once per request: run
 * here (LocalSessionHandle, over the session's controller) or on another
 * worker (the remote handle in remote-sessions.ts, over the cluster's
 * command table). The talk.session.* handlers call it and never ask which.
 * Every verb checks that the caller may drive the session.
 */
export interface SessionHandle {
  readonly sessionId: string;
  join(params: TalkParsedParams<"talk.session.join">): Promise<JoinOutcome>;
  appendAudio: Verb<"appendAudio">;
  startTurn: Verb<"startTurn">;
  endTurn: Verb<"endTurn">;
  cancelTurn: Verb<"cancelTurn">;
  cancelOutput: Verb<"cancelOutput">;
  submitToolResult: Verb<"submitToolResult">;
  callTool: Verb<"callTool">;
  close: Verb<"close">;
}

/** Standard base64 (RFC 4648 §4) with padding: the only alphabet appendAudio accepts. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A realtime session's realtime provider, a transcription's recognizer: the mode's one provider. */
function single(session: TalkSession): string | undefined {
  if (session.mode === "realtime") return session.providers?.realtime;
  if (session.mode === "transcription") return session.providers?.stt;
  return undefined;
}

export function describeSession(session: TalkSession): SessionDescription {
  return {
    sessionId: session.id,
    mode: session.mode,
    transport: session.transport,
    brain: session.brain,
    // The one provider of a realtime session or a transcription, named or the default.
    ...((session.provider ?? single(session)) !== undefined
      ? { provider: session.provider ?? single(session) }
      : {}),
    ...(session.providers !== undefined ? { providers: session.providers } : {}),
    seq: session.lastSeq,
  };
}

/**
 * A session run on this worker, driven by `peer`: a connection here, or on
 * the owner, the stand-in of a client on another worker (its commands arrive
 * through the cluster and are applied by these same verbs).
 */
export class LocalSessionHandle implements SessionHandle {
  readonly sessionId: string;
  readonly #sessions: SessionOwnership;
  readonly #peer: SessionPeer;
  readonly #maxAudioBytes: number;

  constructor(
    sessionId: string,
    sessions: SessionOwnership,
    peer: SessionPeer,
    maxAudioBytesPerFrame: number,
  ) {
    this.sessionId = sessionId;
    this.#sessions = sessions;
    this.#peer = peer;
    this.#maxAudioBytes = maxAudioBytesPerFrame;
  }

  /** Also used by the owner for a remote client's join: `events` is the replay it answers with. */
  async join(params: {
    joinToken: string;
    afterSeq: number;
  }): Promise<JoinOutcome & { events: TalkEvent[] }> {
    const owned = this.#sessions.join(this.sessionId, params.joinToken, this.#peer);
    const replay = owned.session.replay(params.afterSeq);
    const { complete } = replay;
    const events = joinerReplay(replay.events);
    const result = { ...describeSession(owned.session), replayed: events.length, complete };
    const start = (): void => {
      this.#sessions.goLive(owned, this.#peer, params.afterSeq);
      if (owned.session.state === "active") {
        owned.session.emit({ type: "session.ready", payload: { reason: "joined" }, source: "gateway" });
      }
    };
    return { result, events, start };
  }

  async appendAudio(params: {
    audioBase64: string;
    playback?: PlaybackPosition | undefined;
  }): Promise<{ sessionId: string; bytes: number }> {
    const controller = this.#controller(params.playback);
    const max = this.#maxAudioBytes;
    // Checked on the encoded length first so an oversized frame is never decoded.
    if (params.audioBase64.length > Math.ceil(max / 3) * 4) throw tooLarge(max);
    if (!BASE64.test(params.audioBase64)) {
      throw new TalkError("invalid_params", "audioBase64 is not valid base64.", {
        details: { issues: [{ path: "audioBase64", message: "not valid base64" }] },
      });
    }
    const bytes = Buffer.from(params.audioBase64, "base64");
    if (bytes.byteLength > max) throw tooLarge(max);
    controller.appendAudio(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    return { sessionId: this.sessionId, bytes: bytes.byteLength };
  }

  async startTurn(params: {
    playback?: PlaybackPosition | undefined;
  }): Promise<{ sessionId: string; turnId: string }> {
    const turn = this.#controller(params.playback).startTurn();
    return { sessionId: this.sessionId, turnId: turn.id };
  }

  async endTurn(params: { turnId: string }): Promise<{ sessionId: string; turnId: string }> {
    await this.#controller().endTurn(params.turnId);
    return { sessionId: this.sessionId, turnId: params.turnId };
  }

  async cancelTurn(params: {
    turnId?: string;
    reason?: string;
    playback?: PlaybackPosition | undefined;
  }): Promise<{ sessionId: string; cancelled: boolean }> {
    const cancelled = this.#controller(params.playback).cancelTurn(
      params.turnId,
      params.reason ?? "client_request",
    );
    return { sessionId: this.sessionId, cancelled };
  }

  async cancelOutput(params: {
    turnId?: string;
    reason?: string;
    playback?: PlaybackPosition | undefined;
  }): Promise<{ sessionId: string; cancelled: boolean }> {
    const cancelled = this.#controller(params.playback).cancelOutput(
      params.turnId,
      params.reason ?? "client_request",
    );
    return { sessionId: this.sessionId, cancelled };
  }

  async submitToolResult(params: {
    callId: string;
    output: string;
  }): Promise<{ sessionId: string; callId: string }> {
    this.#controller().submitToolResult(params.callId, params.output);
    return { sessionId: this.sessionId, callId: params.callId };
  }

  async callTool(
    params: TalkParsedParams<"talk.session.callTool">,
  ): Promise<TalkResult<"talk.session.callTool">> {
    const controller = this.#controller();
    if (controller.session.brain !== "direct-tools" || !hasDirectTools(controller)) {
      throw new TalkError(
        "invalid_state",
        `talk.session.callTool is for direct-tools sessions; this one is ${controller.session.brain}.`,
        { details: { sessionId: this.sessionId, brain: controller.session.brain } },
      );
    }
    const result = await controller.callTool({
      name: params.name,
      argumentsJson: params.argumentsJson,
      turnId: params.turnId,
    });
    return { sessionId: this.sessionId, ...result };
  }

  /** Closes Gateway-owned sessions and, for symmetry, client-owned ones the caller created. */
  async close(params: { reason?: string }): Promise<{ sessionId: string; closed: true }> {
    const owned = this.#sessions.require(this.sessionId, this.#peer, "any");
    await this.#sessions.close(owned, params.reason ?? "client_request");
    return { sessionId: this.sessionId, closed: true };
  }

  /** The session's controller; the client's playback position, when the verb carries one, is noted first. */
  #controller(playback?: PlaybackPosition): TalkSessionController {
    const owned = this.#sessions.require(this.sessionId, this.#peer, "gateway");
    this.#sessions.reportPlayback(owned, playback);
    // "gateway" guarantees a controller.
    return owned.controller as TalkSessionController;
  }
}

function tooLarge(max: number): TalkError {
  return new TalkError("payload_too_large", `An audio frame carries at most ${max} bytes.`, {
    details: { max },
  });
}
