/**
 * Preload for Twilio's published Node sample run unmodified by the relay-capacity bench (`--real-sample DIR`):
 *
 *   PORT=N OPENAI_API_KEY=sk-bench TALKGATE_BENCH_PROVIDER_PORT=P \
 *     node --import <this file's URL> DIR/index.js
 *
 * The sample hard-codes its provider, `new WebSocket("wss://api.openai.com/v1/realtime?...")` from
 * `import WebSocket from 'ws'`. This registers a module-resolution hook (real-sample-redirect-hooks.mjs) that makes
 * that one import, from the sample's index.js only, resolve to real-sample-ws.mjs: the sample's own ws with a
 * WebSocket subclass whose constructor rewrites exactly `wss://api.openai.com/` to `ws://127.0.0.1:P/`, where the
 * bench's stand-in provider listens. Nothing else of the sample changes: not a line of index.js, not its other
 * imports (@fastify/websocket loads ws through require, which the hook does not see, and gets the unmodified
 * ws), not its logging.
 *
 * Why the rewrite: the bench measures the relay's own work per call against a local stand-in, which talkgate and the
 * rebuilt peer reach over ws:// too; TLS to the provider (and the internet's latency) is not what is measured.
 */
import { realpathSync } from "node:fs";
import { register } from "node:module";
import process from "node:process";
import { MessageChannel } from "node:worker_threads";
import { pathToFileURL, URL } from "node:url";

const port = Number(process.env.TALKGATE_BENCH_PROVIDER_PORT);
if (!Number.isInteger(port) || port <= 0)
  throw new Error(
    "real-sample-redirect.mjs: TALKGATE_BENCH_PROVIDER_PORT=<stand-in provider port> is required",
  );
const main = process.argv[1];
if (!main) throw new Error("real-sample-redirect.mjs: run it as `node --import <it> DIR/index.js`");

// Node 20 runs the hook on a loader thread of its own for the life of the process: the hook tells its thread id,
// announced on stdout, and the bench leaves that thread's CPU out of the sample's (it is idle once the sample has
// loaded, but a GC of its heap can fall in a window).
const { port1, port2 } = new MessageChannel();
port1.once("message", ({ tid }) => {
  process.stdout.write(`[talkgate bench] loader thread ${tid}\n`);
  port1.close();
});
register(new URL("./real-sample-redirect-hooks.mjs", import.meta.url), {
  data: {
    // Node resolves the main module through symlinks: the URL the sample's imports name as their parent.
    sampleIndex: pathToFileURL(realpathSync(main)).href,
    wrapper: new URL("./real-sample-ws.mjs", import.meta.url).href,
    port: port2,
  },
  transferList: [port2],
});

// The sample handles no signal: SIGTERM kills it outright, which is what a process manager does to it in
// production. Only when a V8 profile is asked for (the bench's --cpu-prof) does SIGTERM exit normally, so the
// profile is written.
if (process.execArgv.includes("--cpu-prof")) process.once("SIGTERM", () => process.exit(0));
