import { loadConfig } from "../config/load-config.js";
import { createApp } from "../app.js";

export interface ServeOptions {
  configPath?: string;
}

/**
 * Runs the server until SIGINT/SIGTERM. The first signal closes gracefully
 * (sessions get their terminal events, sockets close with 1001); a second one
 * exits at once.
 */
export async function runServe(options: ServeOptions): Promise<number> {
  const loaded = loadConfig({ path: options.configPath });
  const app = await createApp(loaded);
  const { urls } = await app.listen();
  const served = urls.flatMap((url) => [
    `${url.replace(/^http/, "ws")}/talk`,
    `${url}/healthz`,
    `${url}/readyz`,
    `${url}/metrics`,
  ]);
  app.logger.info({ urls: served }, `talkgate listening: ${served.join(" ")}`);

  let closing = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (closing) {
      app.logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    closing = true;
    app.logger.info({ signal }, "shutting down");
    app.close().then(
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
