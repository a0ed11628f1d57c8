/**
 * A client that creates a session through /talk without naming a provider is
 * told what it got: the create response, the join response and
 * `session.created` name the provider per kind (`providers`), and a realtime
 * session or a transcription its one provider (`provider`).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { FakeOpenAiRealtimeServer } from "../support/fake-openai-realtime-server.js";
import { OPENAI_KEY, recordEvents, startGateway, type GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
let realtime: FakeOpenAiRealtimeServer | undefined;
afterEach(async () => {
  await h?.close();
  await realtime?.close();
  h = realtime = undefined;
});

async function created(client: TalkClient, params: Parameters<TalkClient["request"]>[1]) {
  const rec = recordEvents(client);
  const result = (await client.request("talk.session.create", params as never)) as {
    sessionId: string;
    joinToken: string;
    provider?: string;
    providers?: Record<string, string>;
  };
  const event = await rec.next((e) => e.type === "session.created" && e.sessionId === result.sessionId);
  return { result, payload: event.payload as { providers?: Record<string, string> } };
}

describe("the providers a session runs on, named in the create response and session.created", () => {
  it("stt-tts and transcription without a provider name the defaults; a named one is kept; a joiner is told too", async () => {
    h = await startGateway();
    const client = await h.connect();
    const room = await created(client, { mode: "stt-tts", transport: "managed-room" });
    const defaults = { stt: "pocketsphinx", tts: "espeak-ng", agent: "local-agent" };
    expect(room.result.providers).toEqual(defaults);
    expect(room.result).not.toHaveProperty("provider");
    expect(room.payload.providers).toEqual(defaults);

    const direct = await created(await h.connect({ as: "surface" }), {
      mode: "stt-tts",
      transport: "managed-room",
      brain: "direct-tools",
    });
    expect(direct.result.providers).toEqual({ stt: "pocketsphinx", tts: "espeak-ng" });

    const named = await created(client, {
      mode: "stt-tts",
      transport: "managed-room",
      provider: "espeak-ng",
    });
    expect(named.result).toMatchObject({ provider: "espeak-ng", providers: defaults });

    const captions = await created(client, { mode: "transcription" });
    expect(captions.result).toMatchObject({ provider: "pocketsphinx", providers: { stt: "pocketsphinx" } });
    expect(captions.payload.providers).toEqual({ stt: "pocketsphinx" });

    const joiner = await h.connect();
    const joined = await joiner.request("talk.session.join", {
      sessionId: room.result.sessionId,
      joinToken: room.result.joinToken,
    });
    expect(joined).toMatchObject({ providers: defaults });
  });

  it("a realtime session without a provider names the configured realtime provider", async () => {
    realtime = new FakeOpenAiRealtimeServer({ apiKey: OPENAI_KEY });
    h = await startGateway({ realtimeUrl: await realtime.start() });
    const client = await h.connect({ as: "writer" });
    const relay = await created(client, { mode: "realtime", transport: "gateway-relay" });
    expect(relay.result).toMatchObject({
      mode: "realtime",
      provider: "openai",
      providers: { realtime: "openai" },
    });
    expect(relay.payload.providers).toEqual({ realtime: "openai" });
  });
});
