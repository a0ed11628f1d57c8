/**
 * The peer of the relay-capacity bench: a relay built the way Twilio's
 * published Node sample ("speech-assistant-openai-realtime-api-node",
 * Fastify + a ws WebSocket per side) relays a call, written here from its
 * documented behaviour so the same load can be measured against it in the
 * same run. Per call it opens one socket to the realtime provider; every
 * Twilio `media` frame is parsed with JSON.parse and forwarded as
 * `input_audio_buffer.append`; every provider `response.output_audio.delta`
 * is parsed and sent to Twilio as a `media` frame followed by a `mark`
 * (the sample marks each delta and keeps a mark queue); `speech_started`
 * truncates at the last media timestamp and sends `clear`. No auth, no
 * limits, no sessions, no events, no log: the floor a relay of this kind
 * costs, not a product.
 *
 *   node --import tsx bench/lib/peer-relay-twilio-sample.ts --provider-port 9000 [--port 0]
 *
 * Prints `{"ready":true,"port":N}` when listening; the webhook is POST /incoming-call.
 */
import { parseArgs } from "node:util";
import Fastify from "fastify";
import { WebSocket, WebSocketServer } from "ws";

const { values } = parseArgs({
  options: { "provider-port": { type: "string" }, port: { type: "string", default: "0" } },
});
const providerPort = Number(values["provider-port"]);
if (!Number.isInteger(providerPort) || providerPort <= 0) throw new Error("--provider-port N is required");

const app = Fastify({ logger: false });
app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) =>
  done(null, body),
);
app.post("/incoming-call", async (request, reply) => {
  const host = request.headers.host ?? "127.0.0.1";
  await reply
    .type("text/xml")
    .send(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="ws://${host}/media-stream" /></Connect></Response>`,
    );
});

const wss = new WebSocketServer({ noServer: true });
app.server.on("upgrade", (req, socket, head) => {
  if (req.url !== "/media-stream") return socket.destroy();
  wss.handleUpgrade(req, socket, head, (ws) => relayCall(ws));
});

function relayCall(twilio: WebSocket): void {
  let streamSid: string | null = null;
  let latestMediaTimestamp = 0;
  let lastAssistantItem: string | null = null;
  let markQueue: string[] = [];
  let responseStartTimestamp: number | null = null;

  const openAi = new WebSocket(`ws://127.0.0.1:${providerPort}/v1/realtime?model=gpt-realtime`, {
    headers: { Authorization: "Bearer sk-bench" },
  });
  openAi.on("open", () => {
    openAi.send(
      JSON.stringify({
        type: "session.update",
        session: {
          type: "realtime",
          model: "gpt-realtime",
          output_modalities: ["audio"],
          audio: {
            input: { format: { type: "audio/pcmu" }, turn_detection: { type: "server_vad" } },
            output: { format: { type: "audio/pcmu" }, voice: "alloy" },
          },
          instructions: "You are a helpful assistant.",
        },
      }),
    );
  });
  openAi.on("message", (data) => {
    const response = JSON.parse(String(data)) as {
      type: string;
      delta?: string;
      item_id?: string;
    };
    if (response.type === "response.output_audio.delta" && response.delta) {
      twilio.send(JSON.stringify({ event: "media", streamSid, media: { payload: response.delta } }));
      if (responseStartTimestamp === null) responseStartTimestamp = latestMediaTimestamp;
      if (response.item_id) lastAssistantItem = response.item_id;
      if (streamSid) {
        twilio.send(JSON.stringify({ event: "mark", streamSid, mark: { name: "responsePart" } }));
        markQueue.push("responsePart");
      }
    } else if (response.type === "input_audio_buffer.speech_started") {
      if (markQueue.length > 0 && responseStartTimestamp !== null) {
        const elapsed = latestMediaTimestamp - responseStartTimestamp;
        if (lastAssistantItem)
          openAi.send(
            JSON.stringify({
              type: "conversation.item.truncate",
              item_id: lastAssistantItem,
              content_index: 0,
              audio_end_ms: elapsed,
            }),
          );
        twilio.send(JSON.stringify({ event: "clear", streamSid }));
        markQueue = [];
        lastAssistantItem = null;
        responseStartTimestamp = null;
      }
    }
  });
  openAi.on("error", () => {});

  twilio.on("message", (message) => {
    const data = JSON.parse(String(message)) as {
      event: string;
      media?: { timestamp: string; payload: string };
      start?: { streamSid: string };
    };
    switch (data.event) {
      case "media":
        latestMediaTimestamp = Number(data.media!.timestamp);
        if (openAi.readyState === WebSocket.OPEN)
          openAi.send(JSON.stringify({ type: "input_audio_buffer.append", audio: data.media!.payload }));
        break;
      case "start":
        streamSid = data.start!.streamSid;
        responseStartTimestamp = null;
        latestMediaTimestamp = 0;
        break;
      case "mark":
        if (markQueue.length > 0) markQueue.shift();
        break;
    }
  });
  twilio.on("close", () => {
    if (openAi.readyState === WebSocket.OPEN) openAi.close();
  });
  twilio.on("error", () => {});
}

await app.listen({ host: "127.0.0.1", port: Number(values.port) });
const { port } = app.server.address() as { port: number };
process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid })}\n`);
const stop = (): void => {
  for (const ws of wss.clients) ws.terminate();
  void app.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
