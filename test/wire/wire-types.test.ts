/**
 * The wire type check can fail: messages the SDKs declare compile, and a
 * renamed enum value, a field the SDK does not declare, or JSON Schema in
 * Gemini's `parameters` (talkgate's setup before parametersJsonSchema) do not.
 */
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { CapturedMessage } from "../support/wire-capture.js";
import { generate, typeCheck } from "./wire-types.js";

const files: string[] = [];
afterAll(() => {
  for (const f of files) {
    rmSync(f, { force: true });
    rmSync(f.replace(/\.ts$/, ".tsconfig.json"), { force: true });
  }
});

const at = (vendor: CapturedMessage["vendor"], message: unknown, origin: string): CapturedMessage => ({
  vendor,
  message,
  origin,
});

describe("the wire type check", () => {
  it("compiles what the SDKs declare and names each message that does not, with the test that sent it", async () => {
    const good = [
      at("openai", { type: "input_audio_buffer.append", audio: "<4000 characters>" }, "good append"),
      at("openai", { type: "response.create", response: { output_modalities: ["audio"] } }, "good response"),
      at(
        "xai",
        {
          type: "session.update",
          session: { voice: "Ara", audio: { input: { format: { type: "audio/pcm", rate: 16000 } } } },
        },
        "good xai",
      ),
      at(
        "gemini",
        {
          setup: {
            model: "models/m",
            generationConfig: { responseModalities: ["AUDIO"] },
            tools: [
              {
                functionDeclarations: [
                  { name: "f", parametersJsonSchema: { type: "object", additionalProperties: false } },
                ],
              },
            ],
          },
        },
        "good gemini",
      ),
    ];
    const bad = [
      at("openai", { type: "response.create", response: { output_modalities: ["sound"] } }, "renamed enum"),
      at("openai", { type: "input_audio_buffer.append", audio: "x", sample_rate: 8000 }, "new field"),
      at(
        "xai",
        { type: "session.update", session: { voice: "Ara", audio: { output: { voice: "Ara" } } } },
        "openai-shaped xai",
      ),
      // talkgate's Gemini setup before this change: JSON Schema as `parameters`.
      at(
        "gemini",
        {
          setup: {
            model: "models/m",
            tools: [
              {
                functionDeclarations: [
                  {
                    name: "f",
                    parameters: {
                      type: "object",
                      properties: { id: { type: "string" } },
                      additionalProperties: false,
                    },
                  },
                ],
              },
            ],
          },
        },
        "json schema in parameters",
      ),
    ];
    // One compilation (tsc is slow on a shared machine): the good messages raise no error, each bad one its own.
    const result = await typeCheck(generate([...good, ...bad], "self-test"), `self-test-${process.pid}`);
    files.push(result.file);
    const failed = result;
    expect(failed.ok).toBe(false);
    for (const origin of ["renamed enum", "new field", "openai-shaped xai", "json schema in parameters"])
      expect(failed.output).toContain(`sent by ${origin}`);
    for (const origin of ["good append", "good response", "good xai", "good gemini"])
      expect(failed.output).not.toContain(`sent by ${origin}`);
    expect(failed.output).toMatch(/'"sound"' is not assignable/);
    expect(failed.output).toMatch(/'"sample_rate"' does not exist/);
    expect(failed.output).toMatch(/'"voice"' does not exist/);
    expect(failed.output).toMatch(/'"object"' is not assignable .*Did you mean '"OBJECT"'/);
  }, 180_000);
});
