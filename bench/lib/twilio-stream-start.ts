import { randomBytes } from "node:crypto";
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

/** An inbound call as the load generators place it: the voice webhook's TwiML, read for its stream. */
export interface AnsweredCall {
  callSid: string;
  accountSid: string;
  /** The `<Stream url>` (entities decoded). */
  url: string;
  /** The `<Parameter>`s, sent back as the start's customParameters. */
  parameters: Record<string, string>;
}

/** Posts an inbound call to `webhookUrl` as Twilio does (unsigned: the bench servers run in loopback mode). */
export async function answerInboundCall(webhookUrl: string): Promise<AnsweredCall> {
  const callSid = `CA${randomBytes(16).toString("hex")}`;
  const accountSid = `AC${"0".repeat(32)}`;
  const res = await fetch(webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      CallSid: callSid,
      AccountSid: accountSid,
      From: "+15550100001",
      To: "+15550100002",
      Direction: "inbound",
    }),
  });
  const twiml = await res.text();
  if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${twiml.slice(0, 200)}`);
  const url = /<Stream[^>]*\surl="([^"]+)"/.exec(twiml)?.[1]?.replace(/&amp;/g, "&");
  if (!url) throw new Error("no <Stream url> in the TwiML");
  const parameters = Object.fromEntries(
    [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g)].map((m) => [m[1]!, m[2]!]),
  );
  return { callSid, accountSid, url, parameters };
}
