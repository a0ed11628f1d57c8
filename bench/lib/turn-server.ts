/**
 * The caller side of the turn-taking bench's server (turn-bench-server.ts,
 * spawned): dials it as Twilio does (the signed voice webhook, then the media
 * stream with the TwiML's parameters, the stand-in playing at 1x) and keeps
 * the server's events per CallSid on this process's performance.now() clock.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { ACCOUNT_SID, AUTH_TOKEN } from "../../test/support/telephony-harness.js";
import { TwilioStreamClient } from "../../test/support/twilio-stream-client.js";
import { readProcessCpu, type CpuReading } from "./process-cpu.js";

/**
 * One event of a call as the server forwarded it; `text` (and `replace`) of a user transcript, `endpointMs`
 * of a speech stop, `reason` of a resume ("backchannel" or "no_words").
 */
export interface ServerEvent {
  type: string;
  at: number;
  text?: string;
  /** A user transcript.delta whose text replaces the running transcript instead of extending it. */
  replace?: boolean;
  endpointMs?: number;
  reason?: string;
}

const SERVER = join(import.meta.dirname, "turn-bench-server.ts");

export interface TurnServer {
  /** A call from the stand-in, playing what it receives in real time. */
  dial(): Promise<TwilioStreamClient>;
  /** When events of `type` reached the call's session, performance.now() ms of this process. */
  events(callSid: string, type: string): number[];
  /** Every forwarded event of the call, in order (--details: transcripts, speech start / stop). */
  log(callSid: string): ServerEvent[];
  /** CPU the server process has used so far. */
  cpu(): CpuReading | undefined;
  close(): Promise<void>;
}

/**
 * The bench's server in its own process; `checkout`: another checkout's (a baseline, baseline-checkout.ts),
 * its own bench server script and code.
 */
export async function spawnTurnServer(
  config: {
    mode?: "stt-tts" | "realtime";
    talk?: Record<string, unknown>;
    telephony?: Record<string, unknown>;
    /** stt-tts: a chat completions stand-in with this time to first token answers, not the local agent (ms). */
    agentFirstTokenMs?: number;
  },
  checkout?: string,
): Promise<TurnServer> {
  const root = checkout ?? join(import.meta.dirname, "..", "..");
  const script = checkout ? join(checkout, "bench", "lib", "turn-bench-server.ts") : SERVER;
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", script, "--config-json", JSON.stringify(config)],
    { stdio: ["ignore", "pipe", "inherit", "ipc"], cwd: root },
  );
  const events = new Map<string, ServerEvent[]>();
  child.on("message", (m) => {
    const { callSid, at, ...rest } = m as ServerEvent & { callSid: string };
    let list = events.get(callSid);
    if (!list) events.set(callSid, (list = []));
    list.push({ ...rest, at: at - performance.timeOrigin });
  });
  const { port, publicUrl } = await new Promise<{ port: number; publicUrl: string }>((resolve, reject) => {
    let buffer = "";
    child.stdout!.on("data", (d: Buffer) => {
      buffer += d.toString();
      const line = buffer.split("\n").find((l) => l.startsWith('{"ready"'));
      if (line) resolve(JSON.parse(line) as { port: number; publicUrl: string });
    });
    child.once("exit", (code) => reject(new Error(`turn bench server exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const clients: TwilioStreamClient[] = [];
  return {
    async dial() {
      const callSid = `CA${crypto.randomUUID().replace(/-/g, "")}`;
      const params = {
        CallSid: callSid,
        AccountSid: ACCOUNT_SID,
        From: "+15557654321",
        To: "+15550001111",
        Direction: "inbound",
      };
      const res = await fetch(`${base}/telephony/twilio/voice`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": computeTwilioSignature(
            AUTH_TOKEN,
            `${publicUrl}/telephony/twilio/voice`,
            params,
          ),
        },
        body: new URLSearchParams(params),
      });
      if (res.status !== 200) throw new Error(`voice webhook answered ${res.status}`);
      const twiml = await res.text();
      const customParameters = Object.fromEntries(
        [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
      );
      const client = new TwilioStreamClient({
        url: `ws://127.0.0.1:${port}/telephony/twilio/stream`,
        customParameters,
        callSid,
        accountSid: ACCOUNT_SID,
        playback: "realtime",
      });
      clients.push(client);
      await client.connect();
      return client;
    },
    events(callSid, type) {
      return (events.get(callSid) ?? []).filter((e) => e.type === type).map((e) => e.at);
    },
    log: (callSid) => [...(events.get(callSid) ?? [])],
    cpu: () => (child.pid !== undefined ? readProcessCpu(child.pid) : undefined),
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
