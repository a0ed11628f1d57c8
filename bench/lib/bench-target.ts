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
  spawnRealSample,
  spawnTelephonyServer,
  type BenchServer,
} from "./spawn-telephony-server.js";

/**
 * The relays a bench can spawn itself: ours, the peer (Twilio's Node sample, see peer-relay-twilio-sample.ts),
 * ours from another checkout (`{ checkout }`: its own bench server, e.g. the commit before a change, in the same run),
 * or Twilio's published Node sample itself, unmodified (`{ realSample }`: a checkout of it with `npm install` done,
 * see spawnRealSample).
 */
export type SpawnedRelay =
  "talkgate" | "peer" | { checkout: string; nodeFlags?: readonly string[] } | { realSample: string };

export interface BenchTarget {
  load: TelephonyLoad;
  server: BenchServer | undefined;
  describe: string;
  /** CPU used so far by the whole target (every process of a pool); default: the spawned server's own. */
  readCpu?: () => CpuReading | undefined;
  close(): Promise<void>;
}

/** A bench option's node flags ("--a --b=1"), one per word; none for "" or absent. */
export function splitNodeFlags(flags: string | undefined): string[] {
  return (flags ?? "").split(" ").filter(Boolean);
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
    /** Flags for talkgate's node process (space-separated, e.g. "--single-threaded-gc"); a checkout has its own. */
    "node-flags"?: string | undefined;
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
  let streamUrl: ((twimlUrl: string) => string) | undefined;
  if (webhookUrl === undefined) {
    providerPort ??= await freePort();
    if (typeof relay === "object" && "realSample" in relay) {
      const sample = await spawnRealSample(relay.realSample, providerPort, pin, args["cpu-prof"]);
      server = sample;
      webhookUrl = `http://127.0.0.1:${sample.port}/incoming-call`;
      // Its TwiML names `wss://<Host header>/media-stream`: in production TLS ends in front of it (ngrok, a load
      // balancer) and the sample itself serves plain ws. The bench has no such front, so that exact URL, and only
      // it, is connected as ws:// to the sample; talkgate's and the peer's TwiML are used as they are.
      const front = `wss://127.0.0.1:${sample.port}/media-stream`;
      streamUrl = (url) => {
        if (url !== front) throw new Error(`the real sample's TwiML streams to ${url}, expected ${front}`);
        return `ws://127.0.0.1:${sample.port}/media-stream`;
      };
    } else if (relay === "peer") {
      server = await spawnTelephonyServer(providerPort, pin, undefined, PEER_RELAY, args["cpu-prof"]);
      webhookUrl = `http://127.0.0.1:${server.port}/incoming-call`;
    } else {
      const script =
        typeof relay === "object"
          ? join(relay.checkout, "bench", "lib", "telephony-bench-server.ts")
          : undefined;
      const trim = args["malloc-trim-ms"] ? ["--malloc-trim-ms", args["malloc-trim-ms"]] : [];
      const nodeFlags =
        typeof relay === "object" ? (relay.nodeFlags ?? []) : splitNodeFlags(args["node-flags"]);
      server = await spawnTelephonyServer(
        providerPort,
        pin,
        args["data-dir"],
        script,
        args["cpu-prof"],
        trim,
        nodeFlags,
      );
      webhookUrl = `http://127.0.0.1:${server.port}/telephony/twilio/voice?mode=realtime`;
    }
  } else if (providerPort === undefined) {
    throw new Error("--webhook needs --provider-port (where the target reaches its realtime provider)");
  }
  const load = new TelephonyLoad({
    webhookUrl,
    providerPort,
    ...(shape ? { shape } : {}),
    ...(streamUrl ? { streamUrl } : {}),
  });
  await load.start();
  const kind =
    relay === "peer"
      ? "peer relay (rebuilt like Twilio's Node sample)"
      : typeof relay === "object" && "realSample" in relay
        ? `Twilio's Node sample itself, unmodified, from ${relay.realSample} (plain node; its ws import sent to the stand-in provider; its stdout drained by the bench)`
        : typeof relay === "object"
          ? `talkgate server from ${relay.checkout}`
          : "talkgate server";
  const describe = server
    ? `${kind} pid ${server.child.pid}${server.pinned ? " pinned to CPU 0" : " (not pinned)"}, load generator${pinnedSelf ? " pinned to CPU 1" : ""}`
    : `external target ${webhookUrl}, provider port ${providerPort}`;
  const readCpu = server?.readCpu;
  return {
    load,
    server,
    describe,
    ...(readCpu ? { readCpu } : {}),
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
