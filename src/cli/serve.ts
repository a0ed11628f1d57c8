import { loadConfig } from "../config/index.js";
import { type App, type CreateAppOptions, createApp } from "../app.js";

export interface ServeOptions {
  configPath?: string;
  /** Embedders and test entries: app options (e.g. providers) and a hook once the app listens. */
  app?: CreateAppOptions;
  onListening?: (app: App) => void | Promise<void>;
}

/**
 * Runs the server until SIGINT/SIGTERM. The first signal drains (no new
 * sessions or jobs, running ones continue up to cluster.drainTimeoutMs), then
 * closes gracefully (remaining sessions get their terminal events, sockets
 * close with 1001) and exits 0; a second one exits at once.
 */
export async function runServe(options: ServeOptions): Promise<number> {
  const loaded = loadConfig({ path: options.configPath });
  const app = await createApp(loaded, options.app);
  const { urls } = await app.listen();
  const served = urls.flatMap((url) => [
    // The talk page: open it in a browser to talk with the assistant (docs/web-page.md).
    `${url}/`,
    `${url.replace(/^http/, "ws")}/talk`,
    `${url}/healthz`,
    `${url}/readyz`,
    `${url}/metrics`,
  ]);
  await options.onListening?.(app);
  app.logger.info({ urls: served }, `talkgate listening: ${served.join(" ")}`);

  // SIGTERM/SIGINT drain (cluster.drainTimeoutMs): new sessions and jobs are
  // refused, the worker is marked draining, running sessions end on their own,
  // then the app closes and the process exits 0. A second signal exits at once.
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      app.logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    app.logger.info({ signal, limitMs: app.config.cluster.drainTimeoutMs }, "shutting down: draining");
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
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return 0;
}
