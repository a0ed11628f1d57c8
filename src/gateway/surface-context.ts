/**
 * What a surface (telephony, meetings, the next carrier or platform) gets
 * from the composition root: built once, the same for every surface, so no
 * surface assembles pipeline options, authorizes tokens or maps errors to
 * HTTP statuses on its own. A surface is one encapsulated Fastify plugin over
 * this context (`app.register(surfacePlugin(ctx))`).
 */
import type { FastifyReply } from "fastify";
import type { AppJobs } from "../cluster/index.js";
import type { TalkLogger } from "../core/index.js";
import type { SessionControllerFactory } from "../voice/index.js";
import type { TalkRuntime } from "../core/index.js";
import type { SurfaceMethodDefinition } from "./method-registry.js";
import type { RequestAuthorizer } from "./request-authorizer.js";

export interface SurfaceContext {
  readonly runtime: TalkRuntime;
  /** The one controller factory: providers, tools and trusted pipeline options bound once. */
  readonly createController: SessionControllerFactory;
  /** The one bearer-token authorizer (timing-safe; the same no-token rule as the Talk API). */
  readonly authorizer: RequestAuthorizer;
  /** Cluster jobs when the deployment has a queue worth using (Redis); undefined: the surface works in-process. */
  readonly jobs: AppJobs | undefined;
  /** Adds `<surface>.<verb>` to the Talk API. */
  registerMethod<P, R>(name: string, definition: SurfaceMethodDefinition<P, R>): void;
  /** Sends `<surface>.<event>` to every Talk API connection. */
  broadcast(event: string, payload: unknown): void;
  /** Sends `err` as `{ error }` with the status its code maps to (TalkError.httpStatus); anything else is a 500. */
  replyError(reply: FastifyReply, err: unknown): FastifyReply;
  /**
   * True once the worker drains (SIGTERM, cluster drain) or the app closes:
   * surfaces refuse new calls and streams (a voice webhook answers 503, so
   * the carrier tries its fallback URL); running calls go on.
   */
  draining(): boolean;
  /** http://127.0.0.1:<port> of this process once it listens (local capture and stream URLs); undefined before. */
  loopbackBaseUrl(): string | undefined;
  readonly logger: TalkLogger;
}
