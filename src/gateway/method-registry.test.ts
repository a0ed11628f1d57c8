import { describe, expect, it } from "vitest";
import { z } from "zod";
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

describe("MethodRegistry surface methods", () => {
  const params = z.object({ to: z.string() }).strict();

  it("adds a surface method with its scope beside the public Talk methods", () => {
    const registry = new MethodRegistry(groups);
    registry.registerSurface("telephony.call", {
      scope: "admin",
      params,
      handler: (p: { to: string }) => ({ to: p.to }),
    });
    expect(registry.get("telephony.call")?.scope).toBe("admin");
    expect(registry.scopes()["telephony.call"]).toBe("admin");
    expect(registry.names()).toContain("talk.catalog");
  });

  it("refuses the reserved talk.* namespace, a taken name, a bad name, scope or schema", () => {
    const registry = new MethodRegistry(groups);
    const ok = { scope: "admin" as const, params, handler: () => null };
    expect(() => registry.registerSurface("talk.call", ok)).toThrow(/reserved talk\.\* namespace/);
    registry.registerSurface("telephony.call", ok);
    expect(() => registry.registerSurface("telephony.call", ok)).toThrow(/twice/);
    expect(() => registry.registerSurface("Telephony call", ok)).toThrow(/<surface>\.<verb>/);
    expect(() => registry.registerSurface("telephony.dial", { ...ok, scope: "root" as never })).toThrow(
      /scope/,
    );
    expect(() => registry.registerSurface("telephony.dial", { ...ok, params: {} as never })).toThrow(/zod/);
    expect(registry.get("telephony.dial")).toBeUndefined();
  });
});
