/**
 * Calls across workers. A call's webhook, its media stream and a watcher of
 * its events may each reach a different worker (a load balancer, or
 * `serve --workers`, which hands connections out in turn). The worker that
 * took the stream runs the call's session; any other worker finds that
 * session by asking the live workers (`findCall`, answered from each one's
 * call registry), then reads its events from the cluster's event stream,
 * where the session binder publishes every session's events (the stream a
 * cross-worker `talk.session.join` and `admin.session.follow` read too).
 */
import type { Coordinator } from "../cluster/index.js";
import type { TalkEvent } from "../core/index.js";

/** How long one worker may take to say whether it runs a call, ms. */
const FIND_TIMEOUT_MS = 1000;

export interface CallDirectory {
  /** The session of the call on another worker; undefined when none runs it (or none answered). */
  find(callId: string, signal: AbortSignal): Promise<string | undefined>;
  /** The session's events with seq > afterSeq, in order, each once, from the event stream; returns the unsubscribe. */
  subscribe(sessionId: string, afterSeq: number, listener: (event: TalkEvent) => void): () => void;
  /** Told when a session's worker was lost (its lease lapsed): its stream will say no more. */
  onLost(listener: (sessionId: string) => void): () => void;
  /** Installs how this worker answers for its own calls (their session id); returns its removal. */
  answer(find: (callId: string) => string | undefined): () => void;
}

export function clusterCallDirectory(
  cluster: Pick<
    Coordinator,
    "workerId" | "listWorkers" | "sendWorkerCommand" | "onWorkerCommand" | "subscribeEvents" | "on"
  >,
): CallDirectory {
  return {
    find: async (callId, signal) => {
      const others = (await cluster.listWorkers(signal)).filter((w) => w.id !== cluster.workerId);
      const answers = others.map(async (worker) => {
        const { sessionId } = await cluster.sendWorkerCommand(
          worker.id,
          { verb: "findCall", params: { callId } },
          { signal, timeoutMs: FIND_TIMEOUT_MS },
        );
        if (sessionId === null) throw new Error("not there");
        return sessionId;
      });
      // The first worker that runs it; a worker that does not, or does not answer, is no answer.
      return Promise.any(answers).catch(() => undefined);
    },
    subscribe: (sessionId, afterSeq, listener) => cluster.subscribeEvents(sessionId, afterSeq, listener),
    onLost: (listener) => cluster.on("session-lost", (e) => listener(e.sessionId)),
    answer: (find) =>
      cluster.onWorkerCommand({ findCall: ({ callId }) => ({ sessionId: find(callId) ?? null }) }),
  };
}
