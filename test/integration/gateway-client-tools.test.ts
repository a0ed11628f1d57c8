import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { FakeOpenAiRealtimeServer, type ReceivedEvent } from "../support/fake-openai-realtime-server.js";
import { OPENAI_KEY, recordEvents, rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

/**
 * Client-completed tools (talk.session.create `clientTools`): declared by the
 * client, checked by tool policy, offered to a real provider (the OpenAI
 * Realtime provider against its local stand-in) beside the server's tools; the
 * provider's call reaches the client as tool.call and the client's
 * talk.session.submitToolResult goes back to the provider.
 */
let h: GatewayHarness;
let realtime: FakeOpenAiRealtimeServer;
let client: TalkClient;

beforeAll(async () => {
  realtime = new FakeOpenAiRealtimeServer({ apiKey: OPENAI_KEY });
  const realtimeUrl = await realtime.start();
  h = await startGateway({ realtimeUrl, clientResultTimeoutMs: 400, allowTools: ["show_map"] });
  client = await h.connect({ as: "writer" });
});
afterAll(async () => {
  await h.close();
  await realtime.close();
});

const SHOW_MAP = {
  name: "show_map",
  description: "Shows a city on the user's screen",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

const outputFor = (callId: string) => (e: ReceivedEvent) =>
  e.type === "conversation.item.create" &&
  (e.event["item"] as { type?: string; call_id?: string }).type === "function_call_output" &&
  (e.event["item"] as { call_id?: string }).call_id === callId;

async function relaySession(clientTools: unknown[]): Promise<string> {
  const { sessionId } = await client.request("talk.session.create", {
    mode: "realtime",
    transport: "gateway-relay",
    clientTools,
  });
  return sessionId;
}

describe("talk.session.create clientTools", () => {
  it("offers declared tools to the provider; its call reaches the client, whose result reaches the provider", async () => {
    const rec = recordEvents(client);
    const sessionId = await relaySession([SHOW_MAP]);
    const update = await realtime.waitFor((e) => e.type === "session.update");
    const offered = (update.event["session"] as { tools: { name: string; parameters: unknown }[] }).tools;
    expect(offered.map((t) => t.name)).toEqual(["echo", "slow", "show_map"]);
    expect(offered.find((t) => t.name === "show_map")?.parameters).toEqual(SHOW_MAP.parameters);

    const callId = realtime.callTool({ name: "show_map", arguments: { city: "Oslo" } });
    const call = await rec.next((e) => e.type === "tool.call" && e.callId === callId);
    expect(call).toMatchObject({
      sessionId,
      payload: { name: "show_map", argumentsJson: '{"city":"Oslo"}' },
    });
    await client.request("talk.session.submitToolResult", { sessionId, callId, output: "shown" });
    const sent = await realtime.waitFor(outputFor(callId));
    expect((sent.event["item"] as { output: string }).output).toBe("shown");
    await rec.next((e) => e.type === "tool.result" && e.callId === callId);
    await client.request("talk.session.close", { sessionId });
  });

  it("a client that never answers: the provider gets a timeout tool error, the client a tool.error", async () => {
    const rec = recordEvents(client);
    const updates = () => realtime.received.filter((e) => e.type === "session.update").length;
    const before = updates();
    const sessionId = await relaySession([SHOW_MAP]);
    await expect.poll(updates).toBeGreaterThan(before);
    const callId = realtime.callTool({ name: "show_map", arguments: { city: "Rome" } });
    const error = await rec.next((e) => e.type === "tool.error" && e.callId === callId);
    expect(error.payload).toMatchObject({ name: "show_map", code: "timeout" });
    const sent = await realtime.waitFor(outputFor(callId));
    expect(JSON.parse((sent.event["item"] as { output: string }).output)).toMatchObject({ error: "timeout" });
    const late = await rejectionOf(
      client.request("talk.session.submitToolResult", { sessionId, callId, output: "late" }),
    );
    expect(late.code).toBe("tool_not_found");
    await client.request("talk.session.close", { sessionId });
  });

  it("refuses bad declarations with invalid_params naming the field", async () => {
    const cases: [unknown, string][] = [
      [[{ ...SHOW_MAP, name: "echo" }], "clientTools[0].name"],
      [[SHOW_MAP, { ...SHOW_MAP, name: "shell" }], "clientTools[1].name"],
      [[SHOW_MAP, SHOW_MAP], "clientTools[1].name"],
      [[{ ...SHOW_MAP, name: "not_allowed" }], "clientTools[0].name"],
      [[{ ...SHOW_MAP, extra: 1 }], "clientTools[0].extra"],
      ["show_map", "clientTools"],
      [[{ ...SHOW_MAP, name: "bad name!" }], "clientTools[0].name"],
      [
        [{ ...SHOW_MAP, parameters: { type: "object", description: "x".repeat(20_000) } }],
        "clientTools[0].parameters",
      ],
      [[{ ...SHOW_MAP, parameters: { type: "string" } }], "clientTools[0].parameters"],
      [Array.from({ length: 17 }, (_, i) => ({ ...SHOW_MAP, name: `t${i}` })), "clientTools"],
    ];
    for (const [clientTools, field] of cases) {
      const err = await rejectionOf(
        client.request("talk.session.create", {
          mode: "realtime",
          transport: "gateway-relay",
          clientTools,
        }),
      );
      expect(err.code, field).toBe("invalid_params");
      expect(err.details?.["field"], JSON.stringify(clientTools).slice(0, 80)).toBe(field);
    }
    const transcription = await rejectionOf(
      client.request("talk.session.create", {
        mode: "transcription",
        transport: "gateway-relay",
        clientTools: [SHOW_MAP],
      }),
    );
    expect(transcription).toMatchObject({ code: "invalid_params", details: { field: "clientTools" } });
  });
});
