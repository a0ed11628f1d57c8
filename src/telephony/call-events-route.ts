/**
 * GET /telephony/calls/:callSid/events (write): the talk.events of a call's
 * session as Server-Sent Events, from the session's first held event (replay)
 * to `session.closed`, then the response ends. This is how `talkgate call`
 * prints a live transcript: a phone call's session belongs to the telephony
 * adapter, so it cannot be joined through the Talk API (a join would take
 * its audio away from the line), but it can be watched.
 *
 * Any worker answers for any call: a call running here is read from its
 * session; one running on another worker is found through the call directory
 * (call-directory.ts) and read from the cluster's event stream. A call not
 * known yet (its stream is starting) is waited for, up to `waitMs`; then 404.
 */
import type { FastifyPluginAsync } from "fastify";
import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { CallDirectory } from "./call-directory.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallSession } from "./call-session.js";
import { replyError, type RouteCheck } from "../gateway/index.js";

export const CALL_EVENTS_PATH = "/telephony/calls/:callSid/events";

export interface CallEventsRouteOptions {
  calls: CallRegistry;
  authorize: RouteCheck;
  /** The calls of the other workers; absent: only this worker's calls are served. */
  directory?: CallDirectory | undefined;
  /** How long a request waits for a call that is not known yet, ms. Default 5000. */
  waitMs?: number;
  /** Comment line sent while idle so proxies keep the stream open, ms. Default 15 000. */
  keepAliveMs?: number;
}

/** How often a waiting request looks here for the call, and how often it asks the other workers, ms. */
const LOCAL_POLL_MS = 20;
const REMOTE_POLL_MS = 250;

/** Where a call's events come from: its session here, or its event stream from another worker. */
interface CallEventSource {
  /** Delivers the events after `afterSeq` (replay, then live); returns the unsubscribe. */
  subscribe(listener: (event: TalkEvent) => void): () => void;
  /** The session is over already (a local session closed while the replay was read). */
  over(): boolean;
}

export function callEventsRoute(o: CallEventsRouteOptions): FastifyPluginAsync {
  const waitMs = o.waitMs ?? 5000;
  const keepAliveMs = o.keepAliveMs ?? 15_000;
  return async (app) => {
    app.get<{ Params: { callSid: string } }>(CALL_EVENTS_PATH, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") return replyError(reply, new TalkError(auth));
      const gone = new AbortController();
      request.raw.on("close", () => gone.abort());
      const found = await findCall(o, request.params.callSid, waitMs, gone.signal);
      if (!found) {
        return replyError(reply, new TalkError("session_not_found", "No such call on this server."));
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      let lastSeq = 0;
      let ended = false;
      let unsubscribe = (): void => {};
      let offLost = (): void => {};
      const timer = setInterval(() => res.write(": keep-alive\n\n"), keepAliveMs);
      const end = (): void => {
        if (ended) return;
        ended = true;
        clearInterval(timer);
        unsubscribe();
        offLost();
        res.end();
      };
      const write = (event: TalkEvent): void => {
        if (ended || event.seq <= lastSeq) return;
        lastSeq = event.seq;
        res.write(`event: talk.event\nid: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
        if (event.type === "session.closed") end();
      };
      gone.signal.addEventListener("abort", end, { once: true });
      if (found.remote && o.directory) {
        const sessionId = found.remote;
        // Its worker died: no session.closed will come through the stream.
        offLost = o.directory.onLost((lost) => lost === sessionId && end());
      }
      const source = found.local ? localSource(found.local) : remoteSource(o.directory!, found.remote!);
      unsubscribe = source.subscribe(write);
      if (ended) unsubscribe();
      else if (source.over()) end();
    });
  };
}

/** The session's replay, then its live events; subscribed before the replay is read, so nothing falls between. */
function localSource(call: CallSession): CallEventSource {
  return {
    subscribe: (listener) => {
      const early: TalkEvent[] = [];
      let live = false;
      const unsubscribe = call.session.subscribe((event) => (live ? listener(event) : early.push(event)));
      for (const event of call.session.replay(0).events) listener(event);
      for (const event of early) listener(event);
      live = true;
      return unsubscribe;
    },
    over: () => call.session.state !== "active",
  };
}

/** Another worker's session, from the event stream (replay and live are one read). */
function remoteSource(directory: CallDirectory, sessionId: string): CallEventSource {
  return {
    subscribe: (listener) => directory.subscribe(sessionId, 0, listener),
    over: () => false,
  };
}

/** The call here, or its session on another worker, waiting up to `waitMs` for its stream to start. */
async function findCall(
  o: CallEventsRouteOptions,
  callSid: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<{ local?: CallSession; remote?: string } | undefined> {
  const deadline = performance.now() + waitMs;
  let askedAt = -Infinity;
  for (;;) {
    const local = o.calls.get(callSid);
    if (local) return { local };
    if (o.directory && performance.now() - askedAt >= REMOTE_POLL_MS) {
      askedAt = performance.now();
      const remote = await o.directory.find(callSid, signal).catch(() => undefined);
      if (remote) return { remote };
    }
    if (signal.aborted || performance.now() >= deadline) return undefined;
    await new Promise((r) => setTimeout(r, LOCAL_POLL_MS));
  }
}
