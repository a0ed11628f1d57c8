import { describe, expect, it } from "vitest";
import { ToolRegistry, parseToolArguments } from "./tool-registry.js";
import type { ToolDefinition } from "./tool-registry.js";

const weather: ToolDefinition = {
  name: "get_weather",
  description: "Weather for a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
    additionalProperties: false,
  },
  sideEffects: false,
  handler: async (args) => `sunny in ${String(args["city"])}`,
};

describe("ToolRegistry", () => {
  it("rejects duplicates and malformed definitions with config_invalid", () => {
    const registry = new ToolRegistry().register(weather);
    expect(() => registry.register(weather)).toThrow(expect.objectContaining({ code: "config_invalid" }));
    expect(() => registry.register({ ...weather, name: "has space" })).toThrow(/name/);
    expect(() =>
      registry.register({ ...weather, name: "x", parameters: { type: "string" } as never }),
    ).toThrow(/type "object"/);
    expect(() => registry.register({ ...weather, name: "y", sideEffects: undefined as never })).toThrow(
      /sideEffects/,
    );
    expect(registry.list().map((t) => t.name)).toEqual(["get_weather"]);
  });

  it("exports provider tool definitions filtered by a predicate, without handlers", () => {
    const registry = new ToolRegistry()
      .register(weather)
      .register({ ...weather, name: "hang_up", sideEffects: true });
    const exported = registry.toRealtimeTools((name) => name !== "hang_up");
    expect(exported).toEqual([
      { name: "get_weather", description: weather.description, parameters: weather.parameters },
    ]);
    expect(Object.keys(exported[0] ?? {})).not.toContain("handler");
  });
});

describe("parseToolArguments", () => {
  it("accepts valid arguments and treats empty text as no arguments", () => {
    expect(parseToolArguments(weather, '{"city":"Oslo","days":2}')).toEqual({ city: "Oslo", days: 2 });
    expect(() => parseToolArguments(weather, "")).toThrow(/needs argument "city"/);
  });

  it("rejects bad JSON, non-objects, wrong types and unknown arguments with invalid_params", () => {
    for (const bad of ["{", "[1]", '{"city":3}', '{"city":"a","days":1.5}', '{"city":"a","extra":1}']) {
      expect(() => parseToolArguments(weather, bad)).toThrow(
        expect.objectContaining({ code: "invalid_params" }),
      );
    }
  });
});
