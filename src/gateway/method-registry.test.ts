import { describe, expect, it } from "vitest";
import { MethodRegistry } from "./method-registry.js";
import type { MethodGroup } from "./method-registry.js";
import { talkMethods } from "./methods/talk.js";
import { talkClientMethods } from "./methods/talk-client.js";
import { talkSessionMethods } from "./methods/talk-session.js";
import { TALK_METHODS } from "./protocol/talk-methods.js";

const groups = [talkMethods, talkClientMethods, talkSessionMethods];

describe("MethodRegistry", () => {
  it("maps every public Talk method to exactly one handler with a scope", () => {
    const registry = new MethodRegistry(groups);
    expect(registry.names().sort()).toEqual([...TALK_METHODS].sort());
    expect(registry.scopes()).toMatchObject({
      "talk.catalog": "read",
      "talk.config": "read",
      "talk.speak": "write",
    });
  });

  it("refuses a name outside the public API when it is registered", () => {
    const stray = {
      "talk.realtime.session": { scope: "write", handler: () => ({}) },
    } as unknown as MethodGroup;
    expect(() => new MethodRegistry([...groups, stray])).toThrow(/not a public Talk method/);
  });

  it("refuses a method registered twice and a method left without a handler", () => {
    expect(
      () => new MethodRegistry([...groups, { "talk.mode": talkMethods["talk.mode"] } as MethodGroup]),
    ).toThrow(/twice/);
    expect(() => new MethodRegistry([talkMethods])).toThrow(/no handler for talk\.client\.create/);
  });
});
