/**
 * The telephony pieces over a real loopback WebSocket, driven by the local
 * Twilio stream client: the message parser on what Twilio sends, the framer
 * and playback tracker on what we send, marks echoed after playback, clear,
 * and one-time tokens in `start.customParameters`. A minimal stand-in for the
 * stream route (the call adapter comes later) ties them together.
 */
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import {
  loadSpeechUlaw,
  SPEECH_RECORDINGS,
  TwilioStreamClient,
} from "../../../test/support/twilio-stream-client.js";
import {
  buildClearMessage,
  buildMarkMessage,
  buildMediaMessage,
  parseTwilioMessage,
  type TwilioStreamMessage,
} from "./media-stream-messages.js";
import { OutboundFramer } from "../playout/outbound-framer.js";
import { PlaybackTracker } from "../playout/playback-tracker.js";
import { InProcessOneTimeClaims } from "../../cluster/index.js";
import { StreamTokens } from "../stream-tokens.js";

interface ServerCall {
  ws: WebSocket;
  streamSid?: string;
  messages: TwilioStreamMessage[];
  errors: string[];
  audio: Uint8Array[];
  framer: OutboundFramer;
  tracker: PlaybackTracker;
  speak(itemId: string, ulaw: Uint8Array): void;
  clear(): void;
}

const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
const issue = (callId: string): Promise<string> =>
  tokens.issue({ kind: "inbound", carrier: "twilio", callId }, 30_000);
let wss: WebSocketServer | undefined;
const calls: ServerCall[] = [];
const clients: TwilioStreamClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  calls.length = 0;
  await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
  wss = undefined;
});

async function startServer(): Promise<string> {
  wss = new WebSocketServer({ port: 0, host: "127.0.0.1", maxPayload: 64 * 1024 });
  wss.on("connection", (ws) => {
    const call: ServerCall = {
      ws,
      messages: [],
      errors: [],
      audio: [],
      framer: new OutboundFramer({ maxFramesPerBurst: 5 }),
      tracker: new PlaybackTracker(),
      speak(itemId, ulaw) {
        call.tracker.produced(itemId, ulaw.length / 8);
        call.framer.push(itemId, ulaw);
        call.framer.end(itemId);
        while (call.framer.hasBurst && ws.bufferedAmount < 64 * 1024) {
          for (const out of call.framer.takeBurst()) {
            if (out.type === "media") {
              ws.send(buildMediaMessage(call.streamSid!, out.payload));
              call.tracker.sent(out.itemId, out.ms);
            } else {
              ws.send(buildMarkMessage(call.streamSid!, out.name));
              call.tracker.markSent(out.name, out.itemId);
            }
          }
        }
      },
      clear() {
        call.framer.clear();
        call.tracker.clear();
        ws.send(buildClearMessage(call.streamSid!));
      },
    };
    calls.push(call);
    ws.on("error", () => {});
    ws.on("message", async (data) => {
      const result = parseTwilioMessage(data as Buffer, {
        expectedStreamSid: call.streamSid,
        maxBytes: 16 * 1024,
      });
      if (!result.ok) {
        call.errors.push(String(result.error.details?.reason));
        return;
      }
      const msg = result.message;
      call.messages.push(msg);
      if (msg.event === "start") {
        call.streamSid = msg.start.streamSid;
        const redeemed = await tokens.redeem(msg.start.customParameters.token, {
          carrier: "twilio",
          callId: msg.start.callSid,
        });
        if (!redeemed.ok) return ws.close(1008, `stream token ${redeemed.reason}`);
      } else if (msg.event === "media") {
        call.audio.push(msg.audio);
      } else if (msg.event === "mark") {
        call.tracker.markPlayed(msg.mark.name);
      }
    });
  });
  await new Promise<void>((resolve) => wss!.once("listening", () => resolve()));
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/telephony/twilio/stream`;
}

async function dial(
  url: string,
  playback: "immediate" | "manual" = "manual",
  token?: string,
): Promise<{ client: TwilioStreamClient; call: () => ServerCall }> {
  const client = new TwilioStreamClient({
    url,
    playback,
    callSid: "CA-loop-1",
    customParameters: token === undefined ? {} : { token },
  });
  clients.push(client);
  const before = calls.length;
  await client.connect();
  await client.waitFor(() => calls.length > before);
  const call = calls[before]!;
  return { client, call: () => call };
}

/** Resolves once `predicate` holds, checking after each turn of the event loop (no wall-clock threshold). */
function eventually(predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => (predicate() ? resolve() : void setImmediate(check));
    check();
  });
}

const frames = (ms: number, byte = 0x55): Uint8Array => new Uint8Array(ms * 8).fill(byte);

describe("Twilio stream over loopback", () => {
  it("delivers a real recording as sequential 20 ms u-law media frames, byte for byte", async () => {
    const url = await startServer();
    const { client, call } = await dial(url, "manual", await issue("CA-loop-1"));
    const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
    await client.sendAudio(speech);
    client.sendDtmf("7");
    await client.stop();
    await new Promise<void>((resolve) =>
      call().ws.readyState === call().ws.CLOSED ? resolve() : call().ws.once("close", () => resolve()),
    );

    const c = call();
    expect(c.errors).toEqual([]);
    expect(c.messages.map((m) => m.event).slice(0, 2)).toEqual(["connected", "start"]);
    expect(c.messages.at(-2)).toMatchObject({ event: "dtmf", dtmf: { digit: "7", track: "inbound_track" } });
    expect(c.messages.at(-1)).toMatchObject({ event: "stop", stop: { callSid: "CA-loop-1" } });
    const media = c.messages.filter((m) => m.event === "media");
    expect(media.map((m) => m.media.chunk)).toEqual(media.map((_, i) => String(i + 1)));
    expect(c.audio.slice(0, -1).every((a) => a.byteLength === 160)).toBe(true);
    expect(Buffer.concat(c.audio)).toEqual(Buffer.from(speech));
  });

  it("tracks heard audio per reply from marks the client echoes as it plays", async () => {
    const url = await startServer();
    const { client, call } = await dial(url, "manual", await issue("CA-loop-1"));
    call().speak("reply-1", frames(600));
    await client.waitFor(() => client.marksReceived.length === 6);
    client.play(600);
    await eventually(() => call().tracker.heardMs("reply-1") === 600);

    call().speak("reply-2", frames(1000));
    await client.waitFor(() => client.marksReceived.length === 16);
    client.play(300);
    await eventually(() => call().tracker.heardMs("reply-2") === 300);
    expect(call().tracker.heardMs("reply-2")).toBe(300);
    expect(client.playedMs).toBe(900);

    // Barge-in: clear. The client drops the rest and echoes pending marks at once; they do not count as heard.
    call().clear();
    await client.waitFor(() => client.clears === 1 && client.marksEchoed.length === 16);
    // The server has seen every echo once its tracker holds no pending mark nor counts them.
    await eventually(() => call().messages.filter((m) => m.event === "mark").length === 16);
    client.play(1000);
    expect(client.playedMs).toBe(900);
    expect(call().tracker.heardMs("reply-2")).toBe(300);
    expect(call().tracker.pendingMarks).toBe(0);
  });

  it("closes a stream whose start carries no token with 1008", async () => {
    const url = await startServer();
    const { client } = await dial(url);
    await client.waitFor(() => client.closeCode !== undefined);
    expect(client.closeCode).toBe(1008);
  });

  it("closes a stream that reuses a token with 1008, leaving the first call up", async () => {
    const url = await startServer();
    const token = await issue("CA-loop-1");
    const first = await dial(url, "manual", token);
    const second = await dial(url, "manual", token);
    await second.client.waitFor(() => second.client.closeCode !== undefined);
    expect(second.client.closeCode).toBe(1008);
    expect(second.client.closeReason).toBe("stream token reused");
    expect(first.client.closeCode).toBeUndefined();
  });

  it("reports malformed frames with their reason and keeps the call", async () => {
    const url = await startServer();
    const { client, call } = await dial(url, "manual", await issue("CA-loop-1"));
    client.sendRaw("{oops");
    client.sendJson({
      event: "media",
      sequenceNumber: "9",
      streamSid: client.streamSid,
      media: { track: "inbound", chunk: "1", timestamp: "20", payload: "%%%%" },
    });
    client.sendJson({
      event: "media",
      sequenceNumber: "10",
      streamSid: "MZ-someone-else",
      media: { track: "inbound", chunk: "2", timestamp: "40", payload: "/w==" },
    });
    client.sendJson({
      event: "mark",
      sequenceNumber: "11",
      streamSid: client.streamSid,
      mark: { name: "x".repeat(20_000) },
    });
    await client.sendAudio(frames(40));
    await eventually(() => call().audio.length === 2);
    expect(call().errors).toEqual(["bad_json", "bad_base64", "wrong_stream_sid", "oversized"]);
    expect(client.closeCode).toBeUndefined();
  });
});
