/**
 * Client-owned sessions on the second and third realtime providers, end to
 * end: talk.client.create mints the vendor's ephemeral credential, the test
 * plays the client (a browser) and opens the vendor's socket with it as the
 * vendor documents (xAI: the `xai-client-secret.<token>` subprotocol and the
 * Gateway's session.update sent first; Gemini: `?access_token=` on the
 * constrained endpoint, the Gateway's setup bound into the token), and a
 * function call the model makes is run by the Gateway (talk.client.toolCall,
 * under its policy) and answered in the vendor's shape; the model's answer
 * then reaches the client. The tools offered are the policy's, without the
 * call tools (no call is behind a client's session).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { TalkClient } from "../../src/client/index.js";
import type { ClientCreateResult, TalkEvent } from "../../src/client/index.js";
import { FakeGeminiLiveServer, GEMINI_TEST_KEY } from "../support/fake-gemini-live-server.js";
import { FakeXaiRealtimeServer, XAI_TEST_KEY } from "../support/fake-xai-realtime-server.js";
import { startTelephony, WRITE_TOKEN, type TelephonyHarness } from "../support/telephony-harness.js";

type Json = Record<string, unknown>;

/** The browser's side of a vendor socket: JSON messages (text or binary frames) recorded, awaited by predicate. */
class VendorSocket {
  readonly messages: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #ws: WebSocket;
  #waiters: { match: (m: Json) => boolean; resolve: (m: Json) => void }[] = [];

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as Json;
      this.messages.push(message);
      this.#waiters = this.#waiters.filter((w) => !(w.match(message) && (w.resolve(message), true)));
    });
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  static open(url: string, protocols: string[] = []): Promise<VendorSocket> {
    const ws = new WebSocket(url, protocols);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new VendorSocket(ws)));
      ws.once("error", reject);
    });
  }

  get protocol(): string {
    return this.#ws.protocol;
  }

  send(message: Json): void {
    this.#ws.send(JSON.stringify(message));
  }

  next(match: (m: Json) => boolean): Promise<Json> {
    const found = this.messages.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  close(): void {
    this.#ws.close();
  }
}

describe("client-owned sessions on xAI and Gemini Live", () => {
  let h: TelephonyHarness;
  let talk: TalkClient;
  const events: TalkEvent[] = [];
  const xai = new FakeXaiRealtimeServer();
  const gemini = new FakeGeminiLiveServer();

  beforeAll(async () => {
    const xaiUrl = (await xai.start()).replace(/^ws/, "http").replace(/\/realtime$/, "");
    h = await startTelephony({
      mode: "realtime",
      talk: {
        realtime: {
          provider: "xai",
          providers: {
            openai: { apiKey: "sk-not-used-here", baseUrl: "http://127.0.0.1:9/v1" },
            xai: { apiKey: XAI_TEST_KEY, baseUrl: xaiUrl },
            gemini: { apiKey: GEMINI_TEST_KEY, baseUrl: await gemini.start() },
          },
        },
      },
      config: { agent: { tools: { deny: ["send_dtmf"] } } },
    });
    talk = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
    talk.on("talk.event", (e) => events.push(e));
  });
  afterAll(async () => {
    await talk?.close();
    await h?.close();
    await xai.close();
    await gemini.close();
  });

  const create = (provider: string): Promise<ClientCreateResult> =>
    talk.request("talk.client.create", {
      mode: "realtime",
      transport: "provider-websocket",
      brain: "agent-consult",
      provider,
    });

  /** Runs a provider's function call through the Gateway, as the client does. */
  const runTool = (sessionId: string, callId: string, name: string, argumentsJson: string) =>
    talk.request("talk.client.toolCall", { sessionId, callId, name, argumentsJson });

  it("xAI: the token opens the socket as a subprotocol, the Gateway's session.update configures it, a tool call runs under policy", async () => {
    const grant = await create("xai");
    expect(grant.tools).toEqual(["get_time", "agent_consult"]);
    const prefix = (grant.credentialIn as { subprotocolPrefix: string }).subprotocolPrefix;
    const socket = await VendorSocket.open(grant.endpoint!, [`${prefix}${grant.clientSecret}`]);
    try {
      expect(socket.protocol).toBe(`${prefix}${grant.clientSecret}`);
      await socket.next((m) => m.type === "session.created");
      socket.send(grant.clientConfig!);
      await socket.next((m) => m.type === "session.updated");
      expect(((xai.session.tools ?? []) as Json[]).map((t) => t.name)).toEqual(["get_time", "agent_consult"]);

      const callId = xai.callTool({ name: "get_time", arguments: {} });
      const call = await socket.next((m) => m.type === "response.function_call_arguments.done");
      expect(call).toMatchObject({ call_id: callId, name: "get_time" });
      const result = await runTool(grant.sessionId, callId, "get_time", String(call.arguments));
      expect(JSON.parse(result.output)).toHaveProperty("iso");
      socket.send({
        type: "conversation.item.create",
        item: { type: "function_call_output", call_id: callId, output: result.output },
      });
      socket.send({ type: "response.create" });
      await socket.next((m) => m.type === "response.output_audio.delta");
      await socket.next((m) => m.type === "response.done" && (m.response as Json).status === "completed");
      expect(events.find((e) => e.type === "tool.result" && e.callId === callId)).toMatchObject({
        sessionId: grant.sessionId,
        payload: { name: "get_time", output: result.output },
      });

      const denied = await runTool(grant.sessionId, "call_denied", "send_dtmf", '{"digits":"1"}').then(
        () => undefined,
        (err: { code: string }) => err,
      );
      expect(denied?.code).toBe("tool_denied");
      // A call tool was never offered (no call is behind the session); called anyway, it cannot run.
      const noCall = await runTool(grant.sessionId, "call_end", "end_call", "{}").then(
        () => undefined,
        (err: { code: string }) => err,
      );
      expect(noCall?.code).toBe("capability_unsupported");
    } finally {
      socket.close();
    }
  });

  it("an expired or unknown xAI token does not open the socket", async () => {
    await expect(VendorSocket.open(xai.url, ["xai-client-secret.not-a-minted-token"])).rejects.toThrow(/401/);
  });

  it("Gemini: the one-use token opens the constrained socket bound to the Gateway's setup, a tool call runs under policy", async () => {
    const grant = await create("gemini");
    expect(grant.tools).toEqual(["get_time", "agent_consult"]);
    const url = new URL(grant.endpoint!);
    url.searchParams.set((grant.credentialIn as { query: string }).query, grant.clientSecret);
    const socket = await VendorSocket.open(url.toString());
    try {
      // The client's own setup asks for nothing; the token's (the Gateway's) is the one in force.
      socket.send({ setup: { model: "models/whatever-the-client-likes" } });
      await socket.next((m) => m.setupComplete !== undefined);
      const setup = gemini.setup!;
      expect(String(setup.model)).toMatch(/^models\/gemini-live/);
      const declared = (setup.tools as { functionDeclarations: Json[] }[])[0]!.functionDeclarations;
      expect(declared.map((d) => d.name)).toEqual(["get_time", "agent_consult"]);

      const id = gemini.callTool("get_time", {});
      const message = await socket.next((m) => m.toolCall !== undefined);
      const [call] = (message.toolCall as { functionCalls: Json[] }).functionCalls;
      expect(call).toMatchObject({ id, name: "get_time" });
      const result = await runTool(grant.sessionId, id, "get_time", JSON.stringify(call!.args ?? {}));
      socket.send({
        toolResponse: { functionResponses: [{ id, name: "get_time", response: JSON.parse(result.output) }] },
      });
      // The service took the response and the model answers.
      await socket.next(
        (m) => ((m.serverContent as Json | undefined)?.modelTurn as Json | undefined) !== undefined,
      );
      await socket.next((m) => (m.serverContent as Json | undefined)?.turnComplete === true);
      expect(events.some((e) => e.type === "tool.result" && e.callId === id)).toBe(true);
    } finally {
      socket.close();
    }
    // One use: the same token cannot open a second session.
    const again = await VendorSocket.open(url.toString());
    again.send({ setup: { model: "models/x" } });
    expect((await again.closed).code).toBe(1008);
  });
});
