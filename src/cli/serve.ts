import cluster from "node:cluster";
import { loadConfig, type TalkgateConfig } from "../config/index.js";
import { TalkError } from "../core/index.js";
import { type App, type CreateAppOptions, createApp } from "../app.js";
import { createAppLogger } from "../app/logger.js";
import { startLocalRedis, type LocalRedis } from "./local-redis.js";
import { joinWorkerPool, runWorkerPool } from "./worker-pool.js";

export interface ServeOptions {
  configPath?: string;
  /** The port to listen on (`--port`); overrides PORT and `server.port`. */
  port?: number;
  /** Server processes sharing the port (`--workers`; "auto": one per core); overrides `server.workers`. */
  workers?: number | "auto";
  /** Embedders and test entries: app options (e.g. providers) and a hook once the app listens. */
  app?: CreateAppOptions;
  onListening?: (app: App) => void | Promise<void>;
}

/**
 * Runs the server until SIGINT/SIGTERM. The first signal drains (no new
 * sessions or jobs, running ones continue up to cluster.drainTimeoutMs), then
 * closes gracefully (remaining sessions get their terminal events, sockets
 * close with 1001) and exits 0; a second one exits at once.
 *
 * With `server.workers` (or `--workers`) above 1 this process becomes the
 * primary of a pool of that many server processes sharing the port
 * (src/cli/worker-pool.ts); each of them runs this same function as a worker.
 */
export async function runServe(options: ServeOptions): Promise<number> {
  const env = {
    ...process.env,
    ...(options.workers !== undefined ? { TALKGATE_WORKERS: String(options.workers) } : {}),
    ...(options.port !== undefined ? { PORT: String(options.port) } : {}),
  };
  const loaded = loadConfig({ path: options.configPath, env });
  const { workers } = loaded.config.server;
  if (workers > 1 && cluster.isPrimary) {
    const logger = createAppLogger(loaded.config.log);
    logger.info({ workers, port: loaded.config.server.port }, "talkgate starting its worker processes");
    process.exit(await runPool(workers, loaded.config, logger));
  }
  // A pool worker takes orders from the primary from the start: a stop that comes while the app is
  // still being built ends the process at once (there is nothing to drain yet).
  let shutdown: ((now: boolean, signal?: NodeJS.Signals) => void) | undefined = undefined;
  const member = cluster.isWorker
    ? joinWorkerPool((now) => (shutdown ? shutdown(now) : process.exit(now ? 1 : 0)))
    : undefined;
  const app = await createApp(loaded, options.app);
  shutdown = shutdownOnce(app);
  if (member) {
    member.gather(app.gateway.metrics.registry);
    app.gateway.metrics.useExposition(() => member.machineMetrics());
  }
  const { urls } = await listenOrExplain(app);
  await options.onListening?.(app);
  announce(app, urls);
  if (member) {
    member.listening();
    return 0;
  }
  // SIGTERM/SIGINT drain (cluster.drainTimeoutMs): new sessions and jobs are
  // refused, the worker is marked draining, running sessions end on their own,
  // then the app closes and the process exits 0. A second signal exits at once.
  const onSignal = (signal: NodeJS.Signals): void => {
    app.logger.info({ signal }, "signal received");
    shutdown?.(false, signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return 0;
}

/**
 * The primary: forks the workers and waits for them to stop. Without `redis.url` the processes meet
 * through a private Redis the primary runs for the pool's life; if that Redis goes, the workers drain
 * (they could no longer find each other's calls) and the pool ends with 1.
 */
async function runPool(
  workers: number,
  config: TalkgateConfig,
  logger: ReturnType<typeof createAppLogger>,
): Promise<number> {
  let localRedis: LocalRedis | undefined;
  if (config.redis.url === undefined) {
    try {
      localRedis = await startLocalRedis({ logger, binary: config.redis.poolServer });
    } catch (err) {
      logger.error({ err }, err instanceof Error ? err.message : String(err));
      return 1;
    }
  }
  const stop = new AbortController();
  let closing = false;
  // A stop signal may reach the private Redis too (systemd signals the whole control group): then its
  // exit is part of the stop the signal asked for, not a fault of the pool.
  let signalled = false;
  const onSignal = (): void => void (signalled = true);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  void localRedis?.exited.then(({ code, signal }) => {
    if (closing) return;
    if (signalled) {
      logger.warn({ code, signal }, "the pool's private Redis stopped with the pool");
      return;
    }
    logger.error({ code, signal }, "the pool's private Redis exited: draining every worker");
    stop.abort();
  });
  const configuredId = config.cluster.workerId;
  const redisUrl = localRedis?.url;
  const code = await runWorkerPool({
    workers,
    logger,
    stop: stop.signal,
    // A configured worker id is one machine's: each process gets it with its index appended.
    env: (index) => ({
      TALKGATE_WORKERS: String(workers),
      // --port reached this process only; PORT and server.port reach the workers as they reached it.
      PORT: String(config.server.port),
      ...(configuredId !== undefined ? { TALKGATE_WORKER_ID: `${configuredId}-${index}` } : {}),
      ...(redisUrl !== undefined ? { REDIS_URL: redisUrl } : {}),
    }),
  });
  closing = true;
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  await localRedis?.close();
  return code;
}

/**
 * Binds the server; a port already taken (another talkgate, or any program) or an address this machine
 * does not have is a one-line `config_invalid` saying how to choose another, not a raw stack. The app is
 * closed first, so the process can end.
 */
async function listenOrExplain(app: App): ReturnType<App["listen"]> {
  try {
    return await app.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const { host, port } = app.config.server;
    const explain =
      code === "EADDRINUSE"
        ? `port ${port} on ${host} is already in use (another talkgate, or another program). Stop it, or choose another port: PORT=${port + 1} npm start, talkgate serve --port ${port + 1}, or server.port in the config file.`
        : code === "EACCES"
          ? `port ${port} on ${host} needs privileges this process does not have: choose a port above 1023 (PORT, --port or server.port).`
          : code === "EADDRNOTAVAIL" || code === "ENOTFOUND"
            ? `cannot listen on ${host}: this machine has no such address (HOST or server.host; 127.0.0.1 for this machine only, 0.0.0.0 for every interface).`
            : undefined;
    if (explain === undefined) throw err;
    await app.close().catch(() => {});
    throw new TalkError("config_invalid", explain, { details: { host, port, reason: code }, cause: err });
  }
}

/**
 * The start-up log's last lines: where to point a browser (the talk page first, then the console), the
 * Talk API and the health routes; and, when tokens are configured, that the pages now ask for one.
 */
function announce(app: App, urls: readonly string[]): void {
  const served = urls.flatMap((url) => [
    // The talk page: open it in a browser to talk with the assistant (docs/web-page.md).
    `${url}/`,
    `${url}/console/`,
    `${url.replace(/^http/, "ws")}/talk`,
    `${url}/healthz`,
    `${url}/readyz`,
    `${url}/metrics`,
  ]);
  const first = urls[0] ?? "";
  app.logger.info(
    { urls: served },
    `talkgate listening: open ${first}/ to talk; console ${first}/console/; Talk API ${first.replace(/^http/, "ws")}/talk; ${first}/healthz, /readyz, /metrics`,
  );
  const tokens = app.config.auth.tokens.length;
  if (tokens > 0) {
    app.logger.info(
      { tokens },
      `auth: ${tokens} token(s) configured, so the talk page and the console ask for one (open ${first}/#token=<token>) and the test meeting room is off (meetings.testRoom.enabled turns it on)`,
    );
  }
}

/**
 * Drain then close then exit 0; asked again (or with `now`), exit at once.
 * Ctrl-C (SIGINT) is someone at the terminal: Talk API sessions (the talk
 * page, apps) are told to close at once, since they have no end of their own
 * to wait for, and the log says what the drain still waits for and that a
 * second Ctrl-C stops at once. SIGTERM (an orchestrator) keeps every running
 * session to its end, up to cluster.drainTimeoutMs.
 */
function shutdownOnce(app: App): (now: boolean, signal?: NodeJS.Signals) => void {
  let stopping = false;
  return (now, signal) => {
    if (stopping || now) {
      app.logger.warn("stopping now, without waiting for running sessions");
      process.exit(1);
    }
    stopping = true;
    const limitMs = app.config.cluster.drainTimeoutMs;
    const closed = signal === "SIGINT" ? closeTalkApiSessions(app) : 0;
    const waiting = app.runtime.listSessions().filter((s) => s.state !== "closed").length - closed;
    app.logger.info(
      { limitMs, closedTalkApiSessions: closed, waitingSessions: waiting },
      `shutting down: ${closed > 0 ? `${closed} Talk API session(s) told to close; ` : ""}` +
        (waiting > 0
          ? `waiting up to ${Math.round(limitMs / 1000)} s for ${waiting} running session(s) to end`
          : "draining") +
        (signal === "SIGINT" ? "; press Ctrl-C again to stop at once" : ""),
    );
    app.cluster
      .drain()
      .then((result) => {
        app.logger.info(result, result.drained ? "drained; closing" : "drain limit reached; closing");
        return app.close();
      })
      .then(
        () => process.exit(0),
        (err: unknown) => {
          app.logger.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
  };
}

/** Closes this process's Talk API sessions (reason `shutting_down`); returns how many it closed. */
function closeTalkApiSessions(app: App): number {
  let count = 0;
  for (const session of app.runtime.listSessions()) {
    if (session.state === "closed" || session.metadata["surface"] !== "gateway") continue;
    count += 1;
    app.gateway.closeSession(session.id, "shutting_down").catch((err: unknown) => {
      app.logger.warn({ err, sessionId: session.id }, "closing a Talk API session for shutdown failed");
    });
  }
  return count;
}
