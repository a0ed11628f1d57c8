import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import { EchoPath, speakerphone } from "../support/echo-path.js";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";

/**
 * The speakerphone stand-in of the real-time turn-taking bench and tests: the
 * echo of what the Twilio stand-in plays comes back a fixed delay after it was
 * played, gaps in the playback included. (The path once read only the audio
 * played, so a pause drained its delay and the audio after a clear and a
 * resume came straight back: a delay change no phone makes.)
 */

const DELAY_MS = 200;
const GAP_MS = 300;

let server: WebSocketServer | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** 40 ms of a loud tone, u-law. */
function burst(): Uint8Array {
  const pcm = new Int16Array(320);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(16000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return encodeMulaw(pcm);
}

describe("the speakerphone's echo path on the line's clock", () => {
  it("returns each burst DELAY_MS after it played, also after a pause in the playback", async () => {
    const sentBursts: number[] = [];
    const inbound: Int16Array[] = [];
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    server.on("connection", (ws: WebSocket) => {
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data)) as { event: string; media?: { payload: string } };
        if (msg.event === "media") inbound.push(decodeMulaw(Buffer.from(msg.media!.payload, "base64")));
        if (msg.event !== "start") return;
        const play = (): void => {
          sentBursts.push(performance.now());
          ws.send(
            JSON.stringify({ event: "media", media: { payload: Buffer.from(burst()).toString("base64") } }),
          );
        };
        setTimeout(play, 200);
        setTimeout(play, 200 + GAP_MS);
      });
    });
    await new Promise((r) => server!.once("listening", r));
    const { port } = server.address() as { port: number };
    const client = new TwilioStreamClient({ url: `ws://127.0.0.1:${port}`, playback: "realtime" });
    await client.connect();
    const line = speakerphone(
      client,
      new EchoPath({ delayMs: DELAY_MS, lossDb: 0, response: Float64Array.of(1) }),
    );
    while (sentBursts.length < 2 || performance.now() < sentBursts[1]! + DELAY_MS + 200) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await line.stop();
    await client.close();

    // The frames in which each echo starts: loud after quiet.
    const loud = inbound.map((f) => f.some((s) => Math.abs(s) > 4000));
    const starts = loud.flatMap((l, k) => (l && !loud[k - 1] ? [k] : []));
    expect(starts).toHaveLength(2);
    for (const [k, frame] of starts.entries()) {
      // The playback's 20 ms tick and the caller's 20 ms frame each place it up to a frame early; a path
      // that lost its delay in the pause returns the second burst within a frame or two (10-20 ms).
      const echoAfter = line.sentAt[frame]! - sentBursts[k]!;
      expect(echoAfter, `burst ${k + 1}`).toBeGreaterThanOrEqual(DELAY_MS - 50);
    }
  });
});
