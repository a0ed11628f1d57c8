import type { WebSocket } from "ws";

/** What a Twilio `start` message names (Media Streams: connected, then start, then media). */
export interface TwilioStreamStart {
  accountSid: string;
  streamSid: string;
  callSid: string;
  customParameters: Record<string, string>;
}

/**
 * Waits for `ws` to open, then sends what Twilio sends first on a media
 * stream: `connected` and the `start` of one inbound u-law 8 kHz track. The
 * load generators' calls begin here; `onMessage` is attached before the start
 * goes, so nothing the server answers with is missed.
 */
export async function startTwilioStream(
  ws: WebSocket,
  start: TwilioStreamStart,
  on: { message: (text: string) => void; close: () => void },
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  ws.on("error", () => {});
  ws.on("close", on.close);
  ws.on("message", (data) => on.message(String(data)));
  ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
  ws.send(
    JSON.stringify({
      event: "start",
      sequenceNumber: "1",
      start: {
        accountSid: start.accountSid,
        streamSid: start.streamSid,
        callSid: start.callSid,
        tracks: ["inbound"],
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
        customParameters: start.customParameters,
      },
      streamSid: start.streamSid,
    }),
  );
}
