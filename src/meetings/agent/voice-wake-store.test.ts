import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VoiceWakeStore } from "./voice-wake-store.js";

describe("VoiceWakeStore", () => {
  const dirs: string[] = [];
  const path = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "voicewake-"));
    dirs.push(dir);
    return join(dir, "settings", "voicewake.json");
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("answers the configured triggers until a list is set, then persists the new list for the next start", () => {
    const file = path();
    const store = new VoiceWakeStore({ path: file, defaults: ["computer"] });
    expect(store.get()).toEqual({ triggers: ["computer"], updatedAtMs: 0 });
    const seen: string[][] = [];
    store.onChange((s) => seen.push(s.triggers));
    const set = store.set(["  Hey   Talkgate ", "computer", "COMPUTER"]);
    expect(set.triggers).toEqual(["Hey Talkgate", "computer"]);
    expect(seen).toEqual([["Hey Talkgate", "computer"]]);
    expect(JSON.parse(readFileSync(file, "utf8")).triggers).toEqual(["Hey Talkgate", "computer"]);
    expect(new VoiceWakeStore({ path: file, defaults: ["other"] }).get().triggers).toEqual([
      "Hey Talkgate",
      "computer",
    ]);
  });

  it("refuses an empty list or a blank trigger with invalid_params and keeps the old list", () => {
    const store = new VoiceWakeStore({ path: path(), defaults: ["computer"] });
    expect(() => store.set([])).toThrow(expect.objectContaining({ code: "invalid_params" }));
    expect(() => store.set(["ok", "  "])).toThrow(expect.objectContaining({ code: "invalid_params" }));
    expect(() => store.set([42])).toThrow(expect.objectContaining({ code: "invalid_params" }));
    expect(store.get().triggers).toEqual(["computer"]);
  });

  it("falls back to the configured triggers when the file is damaged, and refuses bad defaults as config_invalid", () => {
    const file = path();
    new VoiceWakeStore({ path: file, defaults: ["a1"] }).set(["b2"]);
    writeFileSync(file, "{not json");
    expect(new VoiceWakeStore({ path: file, defaults: ["computer"] }).get().triggers).toEqual(["computer"]);
    expect(() => new VoiceWakeStore({ path: file, defaults: [] })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("a listener that throws does not stop the others", () => {
    const store = new VoiceWakeStore({ path: path(), defaults: ["computer"] });
    let heard = 0;
    store.onChange(() => {
      throw new Error("boom");
    });
    store.onChange(() => heard++);
    store.set(["assistant"]);
    expect(heard).toBe(1);
  });
});
