import { describe, expect, it } from "vitest";
import { CarrierPlayback } from "./carrier-playback.js";

function playback() {
  const echoed: string[] = [];
  const heard: number[] = [];
  const p = new CarrierPlayback({ echo: (name) => echoed.push(name), played: (a) => heard.push(...a) });
  return { p, echoed, heard };
}

describe("CarrierPlayback (Twilio's side of the line)", () => {
  it("echoes a mark only once the audio sent before it has played", () => {
    const { p, echoed, heard } = playback();
    p.audio(new Uint8Array([1, 2, 3, 4]));
    p.mark("m1");
    p.audio(new Uint8Array([5, 6]));
    p.mark("m2");
    expect(echoed).toEqual([]);
    expect(p.play(3)).toBe(3);
    expect(echoed).toEqual([]);
    expect(p.play(1)).toBe(1);
    expect(echoed).toEqual(["m1"]);
    expect(p.playing).toBe(true);
    expect(p.play(100)).toBe(2);
    expect(echoed).toEqual(["m1", "m2"]);
    expect(heard).toEqual([1, 2, 3, 4, 5, 6]);
    expect(p.playing).toBe(false);
  });

  it("echoes a mark at once when no audio waits, and banks no idle time", () => {
    const { p, echoed } = playback();
    expect(p.play(1000)).toBe(0);
    p.mark("idle");
    expect(echoed).toEqual(["idle"]);
    p.audio(new Uint8Array(16));
    p.mark("after");
    expect(echoed).toEqual(["idle"]); // the earlier idle second does not play it
    p.play(16);
    expect(echoed).toEqual(["idle", "after"]);
  });

  it("clear drops the unplayed audio and echoes every pending mark in order", () => {
    const { p, echoed, heard } = playback();
    p.audio(new Uint8Array([1, 2, 3, 4]));
    p.mark("a");
    p.audio(new Uint8Array([5, 6]));
    p.mark("b");
    p.play(2);
    p.clear();
    expect(echoed).toEqual(["a", "b"]);
    expect(heard).toEqual([1, 2]);
    expect(p.playing).toBe(false);
    expect(p.play(100)).toBe(0);
    expect(heard).toEqual([1, 2]);
  });

  it("an empty media payload does not stall the marks behind it", () => {
    const { p, echoed } = playback();
    p.audio(new Uint8Array(0));
    p.mark("m");
    expect(echoed).toEqual(["m"]);
  });
});
