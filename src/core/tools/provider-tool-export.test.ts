import { describe, expect, it } from "vitest";
import { exportToolsForProvider } from "./provider-tool-export.js";

const tool = {
  name: "lookup",
  description: "Looks things up in the catalogue of everything.",
  parameters: {
    type: "object",
    $schema: "http://json-schema.org/draft-07/schema#",
    properties: {
      q: { type: "string", format: "uuid", description: "query" },
      tags: { type: "array", items: { type: "string", examples: ["a"] } },
    },
    required: ["q"],
    additionalProperties: false,
  },
};

describe("exportToolsForProvider", () => {
  it("keeps the schema keywords the provider accepts and drops the rest, at every level", () => {
    const [out] = exportToolsForProvider([tool]).tools;
    expect(out!.parameters).toEqual({
      type: "object",
      properties: {
        q: { type: "string", description: "query" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["q"],
      additionalProperties: false,
    });
  });

  it("applies a provider's declared limits: long names are left out and reported, descriptions cut", () => {
    const long = { ...tool, name: "x".repeat(40) };
    const result = exportToolsForProvider([tool, long], {
      maxNameLength: 32,
      maxDescriptionLength: 10,
      keywords: ["type", "properties"],
    });
    expect(result.skipped).toEqual([long.name]);
    expect(result.tools).toHaveLength(1);
    expect(result.tools[0]!.description).toBe("Looks thin");
    expect(result.tools[0]!.parameters).toEqual({
      type: "object",
      properties: { q: { type: "string" }, tags: { type: "array" } },
    });
  });

  it("never changes the canonical definition it exports", () => {
    const before = structuredClone(tool);
    exportToolsForProvider([tool], { keywords: ["type"] });
    expect(tool).toEqual(before);
  });
});
