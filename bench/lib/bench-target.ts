/**
 * The target of a telephony bench: our server spawned in its own process
 * (pinned to CPU 0) with the load generator pinned to CPU 1, or any relay
 * server named by --webhook URL --provider-port N (started by the user and
 * configured to reach its realtime provider on that port, where the load
 * generator listens), for a side-by-side comparison.
 */
import { join } from "node:path";
import type { CpuReading } from "./process-cpu.js";
import { readProcessTreeCpu } from "./process-cpu.js";
import { spawnServePool } from "./spawn-serve-pool.js";
import { TelephonyLoad, type LoadShape } from "./twilio-load-calls.js";
import {
  freePort,
  PEER_RELAY,
  pinSelfTo,
  spawnTelephonyServer,
  type BenchServer,
} from "./spawn-telephony-server.js";

/**
 * The relays a bench can spawn itself: ours, the peer (Twilio's Node sample, see peer-relay-twilio-sample.ts), or
 * ours from another checkout (`{ checkout }`: its own bench server, e.g. the commit before a change, in the same run).
 */
export type SpawnedRelay = "talkgate" | "peer" | { checkout: string };

export interface BenchTarget {
  load: TelephonyLoad;
  server: BenchServer | undefined;
  describe: string;
  /** CPU used so far by the whole target (every process of a pool); default: the spawned server's own. */
  readCpu?: () => CpuReading | undefined;
  close(): Promise<void>;
}

export async function benchTarget(
  args: {
    webhook?: string | undefined;
    "provider-port"?: string | undefined;
    pin?: string | undefined;
    "data-dir"?: string | undefined;
    "cpu-prof"?: string | undefined;
    /** talkgate's runtime.mallocTrimIntervalMs (0: no trims); "" or absent: the config's default. */
    "malloc-trim-ms"?: string | undefined;
  },
  relay: SpawnedRelay = "talkgate",
  shape?: LoadShape,
): Promise<BenchTarget> {
  // --pin server (default): the server on CPU 0 only; --pin both: the generator on CPU 1 too (on a shared machine
  // that exposes the generator to whatever else runs there); --pin no: neither.
  const pin = args.pin !== "no";
  const pinnedSelf = args.pin === "both" && pinSelfTo(1);
  let server: BenchServer | undefined;
  let webhookUrl = args.webhook;
  let providerPort = args["provider-port"] !== undefined ? Number(args["provider-port"]) : undefined;
  if (webhookUrl === undefined) {
    providerPort ??= await freePort();
    if (relay === "peer") {
      server = await spawnTelephonyServer(providerPort, pin, undefined, PEER_RELAY, args["cpu-prof"]);
      webhookUrl = `http://127.0.0.1:${server.port}/incoming-call`;
    } else {
      const script =
        typeof relay === "object"
          ? join(relay.checkout, "bench", "lib", "telephony-bench-server.ts")
          : undefined;
      const trim = args["malloc-trim-ms"] ? ["--malloc-trim-ms", args["malloc-trim-ms"]] : [];
      server = await spawnTelephonyServer(
        providerPort,
        pin,
        args["data-dir"],
        script,
        args["cpu-prof"],
        trim,
      );
      webhookUrl = `http://127.0.0.1:${server.port}/telephony/twilio/voice?mode=realtime`;
    }
  } else if (providerPort === undefined) {
    throw new Error("--webhook needs --provider-port (where the target reaches its realtime provider)");
  }
  const load = new TelephonyLoad({ webhookUrl, providerPort, ...(shape ? { shape } : {}) });
  await load.start();
  const describe = server
    ? `${relay === "peer" ? "peer relay (Twilio's Node sample)" : typeof relay === "object" ? `talkgate server from ${relay.checkout}` : "talkgate server"} pid ${server.child.pid}${server.pinned ? " pinned to CPU 0" : " (not pinned)"}, load generator${pinnedSelf ? " pinned to CPU 1" : ""}`
    : `external target ${webhookUrl}, provider port ${providerPort}`;
  return {
    load,
    server,
    describe,
    close: async () => {
      await load.close();
      await server?.close();
    },
  };
}

/** `talkgate serve --workers N` (the real CLI, Redis) as the target; CPU summed over the pool's processes. */
export async function poolTarget(workers: number): Promise<BenchTarget> {
  const providerPort = await freePort();
  const pool = await spawnServePool(workers, providerPort);
  const load = new TelephonyLoad({
    webhookUrl: `http://127.0.0.1:${pool.port}/telephony/twilio/voice?mode=realtime`,
    providerPort,
  });
  await load.start();
  const pid = pool.child.pid!;
  return {
    load,
    server: undefined,
    describe: `talkgate serve --workers ${workers} (primary pid ${pid}, not pinned; the load generator shares the cores)`,
    readCpu: () => readProcessTreeCpu(pid),
    close: async () => {
      await load.close();
      await pool.close();
    },
  };
}
