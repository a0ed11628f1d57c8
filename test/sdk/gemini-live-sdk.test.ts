/**
 * Gemini Live against Google's own SDK (@google/genai): the `setup` talkgate
 * sends on the Live socket, and the ephemeral-token request that binds the
 * same setup, equal to what the SDK builds from the equivalent
 * LiveConnectConfig, both sent to one stand-in that records them.
 */
import { ActivityHandling, GoogleGenAI, Modality, type LiveConnectConfig } from "@google/genai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGeminiLiveProvider } from "../../src/providers/gemini-live/gemini-live-provider.js";
import {
  GEMINI_INPUT_FORMAT,
  GEMINI_OUTPUT_FORMAT,
} from "../../src/providers/gemini-live/gemini-live-setup.js";
import { FakeGeminiLiveServer, GEMINI_TEST_KEY } from "../support/fake-gemini-live-server.js";

type Json = Record<string, unknown>;

const MODEL = "gemini-live-2.5-flash-preview";
const INSTRUCTIONS = "Be brief.";
/** A tool as talkgate's tools are declared: JSON Schema with lower-case types and additionalProperties. */
const TOOL = {
  name: "lookup_order",
  description: "Finds an order",
  parameters: {
    type: "object",
    properties: { id: { type: "string", description: "the order number" }, rush: { type: "boolean" } },
    required: ["id"],
    additionalProperties: false,
  },
};

/** The same session as a LiveConnectConfig, the SDK's way of saying it. */
const CONFIG: LiveConnectConfig = {
  responseModalities: [Modality.AUDIO],
  speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Kore" } } },
  systemInstruction: { parts: [{ text: INSTRUCTIONS }] },
  tools: [
    {
      functionDeclarations: [
        { name: TOOL.name, description: TOOL.description, parametersJsonSchema: TOOL.parameters },
      ],
    },
  ],
  realtimeInputConfig: {
    automaticActivityDetection: { disabled: false },
    activityHandling: ActivityHandling.START_OF_ACTIVITY_INTERRUPTS,
  },
  inputAudioTranscription: {},
  outputAudioTranscription: {},
};

describe("Gemini Live: talkgate's setup and token request are the SDK's", () => {
  let fake: FakeGeminiLiveServer;
  let url: string;
  beforeEach(async () => {
    fake = new FakeGeminiLiveServer();
    url = await fake.start();
  });
  afterEach(() => fake.close());

  it("the Live socket's setup, tools as parametersJsonSchema, equals the SDK's for the same config", async () => {
    const provider = createGeminiLiveProvider({ apiKey: GEMINI_TEST_KEY, baseUrl: url, model: MODEL });
    const session = await provider.connect(
      {
        instructions: INSTRUCTIONS,
        tools: [TOOL],
        voice: "Kore",
        inputFormat: GEMINI_INPUT_FORMAT,
        outputFormat: GEMINI_OUTPUT_FORMAT,
        signal: new AbortController().signal,
      },
      () => {},
    );
    const ours = fake.received[0]!["setup"] as Json;
    await session.close();

    const ai = new GoogleGenAI({ apiKey: GEMINI_TEST_KEY, httpOptions: { baseUrl: url } });
    const sdk = await ai.live.connect({
      model: MODEL,
      config: structuredClone(CONFIG),
      callbacks: { onmessage() {} },
    });
    const theirs = fake.received.at(-1)!["setup"] as Json;
    sdk.close();

    expect(ours).toEqual(theirs);
    // The stand-in accepted both (it refuses JSON Schema in `parameters`, as the API does).
    expect(fake.connections).toBe(2);
  });

  it("the ephemeral-token request binds the same setup the SDK's authTokens.create sends", async () => {
    const provider = createGeminiLiveProvider({
      apiKey: GEMINI_TEST_KEY,
      baseUrl: url,
      model: MODEL,
      clientSecretTtlSeconds: 600,
      newSessionSeconds: 60,
    });
    await provider.createClientSession({
      instructions: INSTRUCTIONS,
      tools: [TOOL],
      transport: "provider-websocket",
      voice: "Kore",
      signal: new AbortController().signal,
    });
    const ours = fake.tokenRequests[0]!;

    const ai = new GoogleGenAI({
      apiKey: GEMINI_TEST_KEY,
      httpOptions: { baseUrl: url, apiVersion: "v1alpha" },
    });
    await ai.authTokens.create({
      config: {
        uses: 1,
        expireTime: String(ours["expireTime"]),
        newSessionExpireTime: String(ours["newSessionExpireTime"]),
        liveConnectConstraints: { model: MODEL, config: structuredClone(CONFIG) },
      },
    });
    const theirs = fake.tokenRequests[1]!;
    expect(ours).toEqual(theirs);
  });
});
