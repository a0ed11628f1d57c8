import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TALK_METHODS, TALK_PARAM_SCHEMAS } from "../../src/gateway/protocol/talk-methods.js";
import { TalkClient } from "../../src/client/talk-client.js";
import { rejectionOf, startGateway } from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

/** Seed 000, "Removed API": every retired public name. */
const REMOVED = [
  "talk.realtime.session",
  "talk.realtime.toolCall",
  "talk.realtime.relayAudio",
  "talk.realtime.relayCancel",
  "talk.realtime.relayMark",
  "talk.realtime.relayToolResult",
  "talk.realtime.relayClose",
  "talk.realtime.relay",
  "talk.transcription.session",
  "talk.transcription.audio",
  "talk.transcription.cancel",
  "talk.transcription.close",
  "talk.transcription.relay",
  "talk.handoff.create",
  "talk.handoff.join",
  "talk.handoff.revoke",
  "talk.session.inputAudio",
  "talk.session.control",
  "talk.session.toolResult",
] as const;

const ROOT = join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

let h: GatewayHarness;
beforeAll(async () => {
  h = await startGateway();
});
afterAll(async () => {
  await h.close();
});

describe("removed Talk API names stay gone", () => {
  it("the server answers the final public API and nothing else in the talk.* namespace", () => {
    const talk = (names: readonly string[]) => names.filter((n) => n.startsWith("talk.")).sort();
    expect(talk(h.server.methods)).toEqual([...TALK_METHODS].sort());
    expect(talk(Object.keys(h.server.scopes))).toEqual([...TALK_METHODS].sort());
    // Anything else is a surface method (<surface>.<verb>, e.g. telephony.call), never a removed name.
    for (const name of h.server.methods.filter((n) => !n.startsWith("talk.")))
      expect(name).toMatch(/^[a-z][a-z0-9-]*\.[a-z]/);
  });

  it.each(REMOVED)("%s answers unknown_method", async (name) => {
    const client = await h.connect();
    const err = await rejectionOf(client.requestUntyped(name, {}));
    expect(err.code).toBe("unknown_method");
  });

  it.each(REMOVED)(
    "%s is absent from the method list, the scope table, the protocol schemas and the client",
    (name) => {
      expect(h.server.methods).not.toContain(name);
      expect(h.server.scopes).not.toHaveProperty([name]);
      expect(TALK_METHODS).not.toContain(name as never);
      expect(Object.keys(TALK_PARAM_SCHEMAS)).not.toContain(name);
      // The client has no method per API name: requests go through request(), typed by TALK_METHODS;
      // reportPlayback/forgetPlayback only keep the heard position that rides on the existing verbs.
      expect(Object.getOwnPropertyNames(TalkClient.prototype).sort()).toEqual(
        [
          "close",
          "closed",
          "constructor",
          "forgetPlayback",
          "on",
          "reportPlayback",
          "request",
          "requestUntyped",
        ].sort(),
      );
    },
  );

  it("no gateway or client source file mentions a removed name, the retired endpoint or an instruction override", () => {
    const files = [...sourceFiles(join(ROOT, "src", "gateway")), ...sourceFiles(join(ROOT, "src", "client"))];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const name of REMOVED) expect(text.includes(name), `${file} mentions ${name}`).toBe(false);
      expect(text.includes("voiceclaw"), `${file} mentions voiceclaw`).toBe(false);
      expect(/instructionsOverride/i.test(text), `${file} mentions instructionsOverride`).toBe(false);
    }
  });

  it("docs/api.md names removed methods only in its migration table", () => {
    const doc = readFileSync(join(ROOT, "docs", "api.md"), "utf8");
    for (const line of doc.split("\n")) {
      for (const name of REMOVED) {
        if (line.includes(name))
          expect(line.startsWith("|"), `docs/api.md outside a table: ${line}`).toBe(true);
      }
    }
    const migration = doc.slice(doc.indexOf("## Removed API"));
    for (const name of REMOVED) expect(migration).toContain(`\`${name}\``);
  });

  it("the retired realtime HTTP endpoint does not exist", async () => {
    const res = await fetch(`${h.httpUrl}/voiceclaw/realtime`);
    expect(res.status).toBe(404);
  });
});
