/**
 * GET /telephony/calls/:callSid/events (admin): the talk.events of a call's
 * session as Server-Sent Events, from the session's first held event (replay)
 * to `session.closed`, then the response ends. This is how `talkgate call`
 * prints a live transcript: a phone call's session belongs to the telephony
 * adapter, so it cannot be joined through the Talk API (a join would take
 * its audio away from the line), but it can be watched.
 *
 * A call not known yet (its stream is starting) is waited for, up to
 * `waitMs`; then 404.
 */
import type { FastifyPluginAsync } from "fastify";
import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallSession } from "./call-session.js";
import { replyError, type RouteCheck } from "../gateway/index.js";

export const CALL_EVENTS_PATH = "/telephony/calls/:callSid/events";

export interface CallEventsRouteOptions {
  calls: CallRegistry;
  authorize: RouteCheck;
  /** How long a request waits for a call that is not known yet, ms. Default 5000. */
  waitMs?: number;
  /** Comment line sent while idle so proxies keep the stream open, ms. Default 15 000. */
  keepAliveMs?: number;
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
      const call = await waitForCall(o.calls, request.params.callSid, waitMs, gone.signal);
      if (!call) {
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
      const write = (event: TalkEvent): void => {
        if (ended || event.seq <= lastSeq) return;
        lastSeq = event.seq;
        res.write(`event: talk.event\nid: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`);
        if (event.type === "session.closed") end();
      };
      // Subscribed before the replay is read, so nothing falls between them (seq dedupes the overlap).
      const early: TalkEvent[] = [];
      let live = false;
      const unsubscribe = call.session.subscribe((event) => (live ? write(event) : early.push(event)));
      const timer = setInterval(() => res.write(": keep-alive\n\n"), keepAliveMs);
      function end(): void {
        if (ended) return;
        ended = true;
        clearInterval(timer);
        unsubscribe();
        res.end();
      }
      gone.signal.addEventListener("abort", end, { once: true });
      for (const event of call.session.replay(0).events) write(event);
      for (const event of early) write(event);
      live = true;
      if (call.session.state !== "active" && !ended) end();
    });
  };
}

async function waitForCall(
  calls: CallRegistry,
  callSid: string,
  waitMs: number,
  signal: AbortSignal,
): Promise<CallSession | undefined> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const call = calls.get(callSid);
    if (call || signal.aborted || performance.now() >= deadline) return call;
    await new Promise((r) => setTimeout(r, 20));
  }
}
