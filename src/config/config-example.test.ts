import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { configSchema } from "./config-schema.js";
import { loadConfig } from "./load-config.js";
import { redactSecrets, schemaFields } from "./redact.js";

const examplePath = fileURLToPath(new URL("../../config.example.json", import.meta.url));
const example = JSON.parse(readFileSync(examplePath, "utf8")) as Record<string, unknown>;

/** The secrets the example leaves to the environment (docs/configuration.md, "An example file"). */
const exampleEnv = {
  TALKGATE_ADMIN_TOKEN: "an-admin-token-of-some-length",
  OPENAI_API_KEY: "sk-example",
  STT_API_KEY: "sk-example",
  TTS_API_KEY: "sk-example",
  AGENT_API_KEY: "sk-example",
  TWILIO_AUTH_TOKEN: "example-auth-token",
  MEETINGS_WEBHOOK_SECRET: "whsec_ZXhhbXBsZS1zZWNyZXQtb2Ytc29tZS1sZW5ndGg=",
};

/** Every object of the schema down to two levels ("talk", "talk.input", "telephony.twilio"), and every top-level key. */
function sections(): string[] {
  const found = new Set<string>();
  for (const { path } of schemaFields(configSchema)) {
    const parts = path.split(".");
    found.add(parts[0]!);
    // An object (or an array of objects), not a list of plain values such as meetings.chromiumArgs.
    const object = parts.length > 3 || (parts.length === 3 && parts[2] !== "[]");
    if (object && parts[1] !== "[]" && parts[1] !== "*") found.add(`${parts[0]}.${parts[1]}`);
  }
  return [...found];
}

function has(value: Record<string, unknown>, path: string): boolean {
  let node: unknown = value;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

describe("config.example.json", () => {
  it("loads through the configuration's validation with the secrets it leaves to the environment", () => {
    const { config, envOverrides } = loadConfig({ path: examplePath, env: exampleEnv });
    expect(envOverrides.sort()).toEqual(Object.keys(exampleEnv).sort());
    expect(config.talk.realtime?.provider).toBe("openai");
    expect(config.server.host).toBe("0.0.0.0");
  });

  it("sets every section of the configuration", () => {
    expect(sections().filter((section) => !has(example, section))).toEqual([]);
  });

  it("holds no secret: every credential comes from the environment", () => {
    expect(redactSecrets(example, configSchema)).toEqual(example);
  });
});
