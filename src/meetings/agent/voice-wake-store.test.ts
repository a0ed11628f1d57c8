import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessCoordinator } from "../../cluster/in-process-coordinator.js";
import { InProcessHub } from "../../cluster/in-process-hub.js";
import type { TalkLogger } from "../../core/logger.js";
import { VoiceWakeStore } from "./voice-wake-store.js";

/** The store on the embedded backend: shared settings persisted in `<dir>/voicewake.json`, as `talkgate serve` without Redis. */
describe("VoiceWakeStore", () => {
  const dirs: string[] = [];
  const coordinators: InProcessCoordinator[] = [];
  const settingsDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "voicewake-"));
    dirs.push(dir);
    return join(dir, "settings");
  };
  /** A fresh worker reading `dir` (what a restart of the server does). */
  const open = async (dir: string, defaults: string[], logger?: TalkLogger): Promise<VoiceWakeStore> => {
    const coordinator = new InProcessCoordinator({ settingsDir: dir, ...(logger ? { logger } : {}) });
    await coordinator.start();
    coordinators.push(coordinator);
    return VoiceWakeStore.open({ settings: coordinator.settings, defaults, ...(logger ? { logger } : {}) });
  };
  afterEach(async () => {
    await Promise.all(coordinators.splice(0).map((c) => c.close()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("answers the configured triggers until a list is set, then persists the new list for the next start", async () => {
    const dir = settingsDir();
    const store = await open(dir, ["computer"]);
    expect(store.get()).toEqual({ triggers: ["computer"], updatedAtMs: 0 });
    const seen: string[][] = [];
    store.onChange((s) => seen.push(s.triggers));
    const set = await store.set(["  Hey   Talkgate ", "computer", "COMPUTER"]);
    expect(set.triggers).toEqual(["Hey Talkgate", "computer"]);
    expect(set.updatedAtMs).toBeGreaterThan(0);
    expect(store.get()).toEqual(set);
    expect(seen).toEqual([["Hey Talkgate", "computer"]]);
    // The same file as before shared settings: <dataDir>/settings/voicewake.json, {triggers, updatedAtMs}.
    expect(JSON.parse(readFileSync(join(dir, "voicewake.json"), "utf8"))).toEqual(set);
    expect((await open(dir, ["other"])).get().triggers).toEqual(["Hey Talkgate", "computer"]);
  });

  it("refuses an empty list or a blank trigger with invalid_params and keeps the old list", async () => {
    const store = await open(settingsDir(), ["computer"]);
    await expect(store.set([])).rejects.toMatchObject({ code: "invalid_params" });
    await expect(store.set(["ok", "  "])).rejects.toMatchObject({ code: "invalid_params" });
    await expect(store.set([42])).rejects.toMatchObject({ code: "invalid_params" });
    expect(store.get().triggers).toEqual(["computer"]);
  });

  it("falls back to the configured triggers, with a warning, when the file is damaged or holds no list; refuses bad defaults as config_invalid", async () => {
    const dir = settingsDir();
    await (await open(dir, ["a1"])).set(["b2"]);
    const warnings: string[] = [];
    const logger = {
      warn: (_obj: unknown, msg: string) => warnings.push(msg),
      info: () => {},
      debug: () => {},
      error: () => {},
    } as unknown as TalkLogger;
    writeFileSync(join(dir, "voicewake.json"), "{not json");
    expect((await open(dir, ["computer"], logger)).get().triggers).toEqual(["computer"]);
    writeFileSync(join(dir, "voicewake.json"), JSON.stringify({ triggers: "computer" }));
    expect((await open(dir, ["computer"], logger)).get().triggers).toEqual(["computer"]);
    expect(warnings).toHaveLength(2);
    await expect(open(dir, [])).rejects.toMatchObject({ code: "config_invalid" });
  });

  it("a listener that throws does not stop the others", async () => {
    const store = await open(settingsDir(), ["computer"]);
    let heard = 0;
    store.onChange(() => {
      throw new Error("boom");
    });
    store.onChange(() => heard++);
    await store.set(["assistant"]);
    expect(heard).toBe(1);
  });

  it("two workers on one hub: a set on one is read and heard once on the other", async () => {
    const hub = new InProcessHub();
    const [a, b] = [new InProcessCoordinator({ hub }), new InProcessCoordinator({ hub })];
    await Promise.all([a.start(), b.start()]);
    coordinators.push(a, b);
    const onA = await VoiceWakeStore.open({ settings: a.settings, defaults: ["computer"] });
    const onB = await VoiceWakeStore.open({ settings: b.settings, defaults: ["computer"] });
    const heardOnB: string[][] = [];
    onB.onChange((s) => heardOnB.push(s.triggers));
    await onA.set(["jarvis"]);
    expect(onB.get().triggers).toEqual(["jarvis"]);
    expect(heardOnB).toEqual([["jarvis"]]);
  });
});
