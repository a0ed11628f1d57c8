import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import type { ClientSessionRequest } from "../../core/provider-types.js";
import { FakeOpenAiServer } from "../../../test/support/fake-openai-server.js";
import { createOpenAiRealtimeProvider } from "./openai-realtime-provider.js";

const KEY = "sk-proj-Zq81secretValueThatMustNeverLeak0042";

function request(overrides: Partial<ClientSessionRequest> = {}): ClientSessionRequest {
  return {
    instructions: "You are the assistant of a phone line.",
    tools: [
      {
        name: "lookup_order",
        description: "Finds an order",
        parameters: { type: "object", properties: { id: { type: "string" } } },
      },
    ],
    transport: "webrtc",
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function rejectionOf(promise: Promise<unknown>): Promise<TalkError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TalkError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("OpenAI Realtime client secrets", () => {
  let server: FakeOpenAiServer;
  let baseUrl: string;

  beforeEach(async () => {
    server = new FakeOpenAiServer({ apiKey: KEY });
    baseUrl = await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("mints a client secret with the documented GA request body", async () => {
    const provider = createOpenAiRealtimeProvider({
      baseUrl,
      apiKey: KEY,
      model: "gpt-realtime",
      voice: "marin",
    });
    const grant = await provider.createClientSession(request());
    expect(grant.clientSecret).toMatch(/^ek_/);
    expect(Date.parse(grant.expiresAt)).toBeGreaterThan(Date.now());
    expect(grant).toMatchObject({
      model: "gpt-realtime",
      voice: "marin",
      endpoint: `${baseUrl}/realtime/calls`,
    });

    expect(server.requests).toHaveLength(1);
    const sent = server.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toEqual({
      expires_after: { anchor: "created_at", seconds: 600 },
      session: {
        type: "realtime",
        model: "gpt-realtime",
        instructions: "You are the assistant of a phone line.",
        audio: { output: { voice: "marin" } },
        tools: [
          {
            type: "function",
            name: "lookup_order",
            description: "Finds an order",
            parameters: { type: "object", properties: { id: { type: "string" } } },
          },
        ],
      },
    });
  });

  it("points provider-websocket clients at the Realtime WebSocket for the model", async () => {
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    const grant = await provider.createClientSession(
      request({ transport: "provider-websocket", voice: "cedar" }),
    );
    expect(grant.endpoint).toBe(`${baseUrl.replace("http:", "ws:")}/realtime?model=gpt-realtime`);
    expect(grant.voice).toBe("cedar");
  });

  it("maps an upstream 401 to provider_error with the status and without the key", async () => {
    const wrongKey = "sk-proj-WrongKeyAlsoSecret9876543210";
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: wrongKey });
    const err = await rejectionOf(provider.createClientSession(request()));
    expect(err.code).toBe("provider_error");
    expect(err.retryable).toBe(false);
    expect(err.details).toMatchObject({ status: 401, upstreamCode: "invalid_api_key" });
    const everything = JSON.stringify({ message: err.message, details: err.details, json: err.toJSON() });
    expect(everything).toContain("401");
    expect(everything).not.toContain(wrongKey);
    expect(everything).not.toContain(wrongKey.slice(0, 6));
    expect(everything).not.toContain(KEY);
  });

  it("marks upstream 5xx as retryable provider_error", async () => {
    server.failNext(503, {
      error: { message: "The server is overloaded.", type: "server_error", param: null, code: null },
    });
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    const err = await rejectionOf(provider.createClientSession(request()));
    expect(err).toMatchObject({ code: "provider_error", retryable: true, details: { status: 503 } });
    expect(err.message).toContain("overloaded");
  });

  it("rejects a 200 answer without a secret as provider_error", async () => {
    server.failNext(200, { expires_at: 1 });
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    expect((await rejectionOf(provider.createClientSession(request()))).code).toBe("provider_error");
  });

  it("an aborted request rejects with cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    expect(
      (await rejectionOf(provider.createClientSession(request({ signal: controller.signal })))).code,
    ).toBe("cancelled");
    expect(server.requests).toHaveLength(0);
  });

  it("an unreachable endpoint is provider_unavailable", async () => {
    await server.close();
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    expect((await rejectionOf(provider.createClientSession(request()))).code).toBe("provider_unavailable");
  });

  it("refuses gateway-owned transports and unknown voices before calling upstream", async () => {
    const provider = createOpenAiRealtimeProvider({ baseUrl, apiKey: KEY });
    expect(
      (await rejectionOf(provider.createClientSession(request({ transport: "gateway-relay" })))).code,
    ).toBe("capability_unsupported");
    expect((await rejectionOf(provider.createClientSession(request({ voice: "nobody" })))).code).toBe(
      "invalid_params",
    );
    expect(server.requests).toHaveLength(0);
  });

  it("without a key it is unhealthy and refuses to mint", async () => {
    const provider = createOpenAiRealtimeProvider({ baseUrl });
    expect(await provider.health()).toMatchObject({ ok: false });
    expect((await rejectionOf(provider.createClientSession(request()))).code).toBe("provider_unavailable");
  });

  it("declares client sessions over webrtc and provider-websocket, and the gateway relay with u-law passthrough", () => {
    const caps = createOpenAiRealtimeProvider({
      apiKey: KEY,
      models: ["gpt-realtime", "gpt-realtime-mini"],
    }).capabilities;
    expect(caps.inputFormats).toContainEqual({ encoding: "g711_ulaw", sampleRate: 8000, channels: 1 });
    expect(caps.outputFormats).toContainEqual({ encoding: "g711_ulaw", sampleRate: 8000, channels: 1 });
    expect(caps).toMatchObject({
      modes: ["realtime"],
      transports: ["webrtc", "provider-websocket", "gateway-relay"],
      gatewayRelay: true,
      clientSessions: true,
      models: ["gpt-realtime", "gpt-realtime-mini"],
    });
    expect(caps.voices).toContain("marin");
  });

  it("validates options at construction", () => {
    expect(() => createOpenAiRealtimeProvider({ clientSecretTtlSeconds: 5 })).toThrow(
      /clientSecretTtlSeconds/,
    );
    expect(() => createOpenAiRealtimeProvider({ baseUrl: "not a url" })).toThrow(/baseUrl/);
    expect(() => createOpenAiRealtimeProvider({ voice: "nobody" })).toThrow(/voice/);
  });
});

describe("fake OpenAI server", () => {
  it("rejects a body in the pre-GA shape with 400", async () => {
    const server = new FakeOpenAiServer();
    const baseUrl = await server.start();
    try {
      const res = await fetch(`${baseUrl}/realtime/client_secrets`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ session: { type: "realtime", voice: "alloy" } }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toBe("session.voice");
    } finally {
      await server.close();
      await server.close();
    }
  });
});

describe("OpenAI Realtime gateway-relay connect", () => {
  it("opens a session at baseUrl/realtime and passes u-law through both ways", async () => {
    const { FakeOpenAiRealtimeServer } = await import("../../../test/support/fake-openai-realtime-server.js");
    const fake = new FakeOpenAiRealtimeServer({ apiKey: KEY });
    const url = await fake.start();
    try {
      const provider = createOpenAiRealtimeProvider({
        apiKey: KEY,
        baseUrl: url.replace(/^ws/, "http").replace(/\/realtime$/, ""),
      });
      const events: string[] = [];
      const ulaw = { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 } as const;
      const voice = await provider.connect(
        {
          instructions: "Be brief.",
          tools: [],
          inputFormat: ulaw,
          outputFormat: ulaw,
          signal: new AbortController().signal,
        },
        (e) => events.push(e.type),
      );
      expect(events).toContain("ready");
      expect(fake.lastRequestUrl).toContain("model=gpt-realtime");
      const audio = fake.session.audio as { input: { format: unknown }; output: { format: unknown } };
      expect(audio.input.format).toEqual({ type: "audio/pcmu" });
      expect(audio.output.format).toEqual({ type: "audio/pcmu" });
      voice.appendAudio(new Uint8Array(160).fill(0xff));
      await fake.waitFor((e) => e.type === "input_audio_buffer.append");
      expect(fake.audioMsReceived).toBe(20);
      await voice.close();
    } finally {
      await fake.close();
    }
  });

  it("without a key connect fails with provider_unavailable before dialing", async () => {
    const provider = createOpenAiRealtimeProvider({});
    const ulaw = { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 } as const;
    const err = await rejectionOf(
      provider.connect(
        {
          instructions: "x",
          tools: [],
          inputFormat: ulaw,
          outputFormat: ulaw,
          signal: new AbortController().signal,
        },
        () => {},
      ),
    );
    expect(err.code).toBe("provider_unavailable");
  });
});
