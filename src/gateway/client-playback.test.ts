import { describe, expect, it } from "vitest";
import { ClientPlayback, playedOut } from "./client-playback.js";

const PCM16_24K = { encoding: "pcm16", sampleRate: 24_000, channels: 1 } as const;
/** Bytes of `ms` of PCM16 mono at 24 kHz. */
const bytes = (ms: number): number => (24_000 * 2 * ms) / 1000;

describe("ClientPlayback", () => {
  it("counts sent audio as played until a client that declared nothing reports", () => {
    let now = 0;
    const playback = new ClientPlayback({ now: () => now });
    playback.written("item-1", PCM16_24K, bytes(2000));
    now = 100;
    expect(playback.reporting).toBe(false);
    expect(playback.remainingMs("item-1")).toBe(0);
    expect(playback.heardMs("item-1")).toBeUndefined();
  });

  it("estimates a declared reporter's playback from the first audio sent, before any report", () => {
    let now = 0;
    const playback = new ClientPlayback({ now: () => now, reporting: true });
    playback.written("item-1", PCM16_24K, bytes(2000));
    now = 500;
    expect(playback.reporting).toBe(true);
    expect(playback.remainingMs("item-1")).toBe(1500);
    expect(playback.playing).toBe(true);
    // Nothing reported yet: what was heard is 0, so a cancel now truncates at the item's start.
    expect(playback.heardMs("item-1")).toBe(0);
    now = 2000;
    expect(playback.remainingMs("item-1")).toBe(0);
  });

  it("a declared reporter's report moves the estimate: the answer ends at its reported pace", () => {
    let now = 0;
    const playback = new ClientPlayback({ now: () => now, reporting: true });
    playback.written("item-1", PCM16_24K, bytes(2000));
    now = 1000;
    // The client started late: 600 ms played at 1 s.
    playback.report({ itemId: "item-1", playedMs: 600 });
    expect(playback.heardMs("item-1")).toBe(600);
    expect(playback.remainingMs("item-1")).toBe(1400);
  });

  it("playedOut waits for a declared reporter's estimate, and at once for one that declared nothing", async () => {
    const declared = new ClientPlayback({ reporting: true });
    const silent = new ClientPlayback();
    declared.written("item-1", PCM16_24K, bytes(60));
    silent.written("item-1", PCM16_24K, bytes(60_000));
    const signal = new AbortController().signal;
    let declaredDone = false;
    const waiting = playedOut(declared, "item-1", signal).then(() => (declaredDone = true));
    await playedOut(silent, "item-1", signal);
    expect(declaredDone).toBe(false);
    await waiting;
    expect(declaredDone).toBe(true);
  });
});
