/**
 * Talk API clients that never read their replies: the server bounds what it
 * queues for them per socket, per client (token) and in total, cuts the slowest
 * reader first when a bound is passed (its queue freed at once), counts the
 * cuts in /metrics, and a client that reads is served throughout. Real
 * sockets on loopback; a reader that stops is a client whose TCP socket is
 * paused (the kernel's buffers fill, then the server's queue grows).
 */
import { afterEach, describe, expect, it } from "vitest";
import { audioFromBytes, type AudioChunk } from "../../src/core/audio-chunk.js";
import type { TtsProvider } from "../../src/core/provider-types.js";
import type { TOKENS } from "../support/gateway-harness.js";
import { type GatewayHarness, type RawSocket, startGateway } from "../support/gateway-harness.js";

const MiB = 1024 * 1024;
/** Each talk.speak answer carries 256 KiB of audio (about 350 KB of JSON). */
const AUDIO = new Uint8Array(256 * 1024).fill(7);

/** A TTS that answers at once, so replies pile up as fast as a client asks. */
const instantTts: TtsProvider = {
  kind: "tts",
  id: "instant-tts",
  label: "instant",
  capabilities: { streaming: true, local: true },
  health: async () => ({ ok: true }),
  async *synthesize(): AsyncGenerator<AudioChunk> {
    yield audioFromBytes(AUDIO, { encoding: "pcm16", sampleRate: 16_000, channels: 1 });
  },
};

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A client that asks for `count` speeches and never reads an answer. */
async function neverReading(as: keyof typeof TOKENS, count: number): Promise<RawSocket> {
  const socket = await h!.raw(as);
  (socket.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  for (let i = 0; i < count; i++)
    socket.send(JSON.stringify({ type: "req", id: `s${i}`, method: "talk.speak", params: { text: "hi" } }));
  return socket;
}

async function metric(name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${h!.httpUrl}/metrics`)).text();
  const values = new Map<string, number>();
  for (const m of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, "gm")))
    values.set(m[1] ?? "", Number(m[2]));
  return values;
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("Talk API: slow readers", () => {
  it("past the total bound the slowest readers are cut, counted in /metrics, and a reading client is served", async () => {
    h = await startGateway({
      tts: instantTts,
      options: { maxBufferedBytesTotal: 6 * MiB, maxBufferedBytesPerClient: 64 * MiB },
    });
    const reader = await h.connect({ as: "reader" });
    // Three tokens, each far under its own bounds, together past the total.
    for (const as of ["admin", "writer", "surface"] as const) await neverReading(as, 60);
    await until(
      "a slow reader cut for the total",
      async () => (await metric("talkgate_ws_slow_consumers_total")).get('{limit="total"}')! >= 1,
    );
    // Gone on the server at once (terminated: no closing handshake waiting behind the queue nobody reads).
    await until("the cut socket gone", async () => (await metric("talkgate_ws_connections")).get("")! <= 3);
    await until(
      "the queues within the total",
      async () => (await metric("talkgate_ws_queued_bytes")).get("")! <= 6 * MiB,
    );
    expect(h.logLines.some((l) => l["msg"] === "slow consumer; cut" && l["limit"] === "total")).toBe(true);
    // A client that reads is untouched and still answered.
    const catalog = await reader.request("talk.catalog", {});
    expect(catalog).toBeDefined();
  }, 60_000);

  it("the connections of one token share a bound: its slowest is cut, another token's reader is not", async () => {
    h = await startGateway({
      tts: instantTts,
      options: { maxBufferedBytesPerClient: 4 * MiB, maxBufferedBytesTotal: 512 * MiB },
    });
    const mine = [await neverReading("writer", 50), await neverReading("writer", 50)];
    await until(
      "a slow reader cut for its client",
      async () => (await metric("talkgate_ws_slow_consumers_total")).get('{limit="client"}')! >= 1,
    );
    expect(h.logLines.some((l) => l["msg"] === "slow consumer; cut" && l["principal"] === "writer")).toBe(
      true,
    );
    const other = await h.connect({ as: "admin" });
    expect(await other.request("talk.catalog", {})).toBeDefined();
    expect((await metric("talkgate_ws_slow_consumers_total")).get('{limit="total"}') ?? 0).toBe(0);
    for (const socket of mine) socket.ws.terminate();
  }, 60_000);
});
