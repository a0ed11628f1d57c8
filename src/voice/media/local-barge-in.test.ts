import { describe, expect, it } from "vitest";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import type { SessionController } from "../pipelines/session-controller.js";
import { bargeInGate, LocalBargeIn } from "./local-barge-in.js";

const FRAME = 160;

/** What the provider got: the frames appended, in order. */
function leg(o: { playing: () => boolean; cut?: boolean }) {
  const sent: Int16Array[] = [];
  const bargeIns: string[] = [];
  const controller = {
    appendPcm: (pcm: Int16Array) => sent.push(pcm.slice()),
  } as unknown as SessionController;
  const gate = bargeInGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800 }, 8000, undefined);
  const local = new LocalBargeIn({
    controller,
    gate,
    bargeIn: (source) => {
      bargeIns.push(source);
      return o.cut ?? true;
    },
    playing: o.playing,
    echoTailMs: 300,
  });
  const feed = (pcm: Int16Array) => {
    for (let at = 0; at + FRAME <= pcm.length; at += FRAME) local.audio(pcm.subarray(at, at + FRAME));
  };
  return { sent, bargeIns, feed, gate };
}

const energy = (frames: Int16Array[]): number =>
  frames.reduce((n, f) => n + f.reduce((m, v) => m + v * v, 0), 0);
const speech = loadSpeech("goforward.raw", 8000);
/** A faint residue (-50 dBFS), no speech. */
const residue = Int16Array.from({ length: 8000 }, (_, i) => Math.round(100 * Math.sin(i / 3)));

describe("local barge-in (a realtime leg's gate on echo-cancelled audio)", () => {
  it("while the answer plays, the provider hears silence in place of what is left of its echo", () => {
    const l = leg({ playing: () => true });
    l.feed(residue);
    expect(l.sent).toHaveLength(50);
    expect(l.sent.every((f) => f.length === FRAME)).toBe(true);
    expect(energy(l.sent)).toBe(0);
    expect(l.bargeIns).toHaveLength(0);
  });

  it("nothing playing (past the echo's tail): the caller's audio passes as it is", () => {
    const l = leg({ playing: () => false });
    l.feed(residue);
    expect(energy(l.sent)).toBe(energy([residue.subarray(0, 8000)]));
  });

  it("speech that cuts the answer reaches the provider from its pre-roll on", () => {
    let playing = true;
    const l = leg({ playing: () => playing });
    l.feed(residue.subarray(0, 4000));
    for (let at = 0; at + FRAME <= speech.length; at += FRAME) {
      const before = l.bargeIns.length;
      l.feed(speech.subarray(at, at + FRAME));
      if (l.bargeIns.length > before) playing = false; // the leg's bargeIn cut the answer
    }
    expect(l.bargeIns).toEqual(["local_vad"]);
    expect(energy(l.sent)).toBeGreaterThan(0.5 * energy([speech]));
    // Silence stood for the residue before the speech.
    expect(energy(l.sent.slice(0, 25))).toBe(0);
  });

  it("speech that began on a quiet line stays heard when an answer starts meanwhile", () => {
    let playing = false;
    const l = leg({ playing: () => playing });
    const half = Math.floor(speech.length / 2 / FRAME) * FRAME;
    l.feed(speech.subarray(0, half));
    playing = true;
    l.feed(speech.subarray(half));
    expect(l.bargeIns).toHaveLength(1);
    expect(energy(l.sent)).toBe(energy([speech.subarray(0, l.sent.length * FRAME)]));
  });

  it("speech just after the answer (within the echo's tail) is heard from its pre-roll", () => {
    let playing = true;
    const l = leg({ playing: () => playing, cut: false });
    l.feed(residue.subarray(0, 1600));
    playing = false;
    l.feed(speech);
    expect(l.bargeIns).toEqual(["local_vad"]);
    expect(energy(l.sent)).toBeGreaterThan(0.5 * energy([speech]));
  });

  it("speech the policy lets play over (a protected greeting) stays unheard by the provider", () => {
    const l = leg({ playing: () => true, cut: false });
    l.feed(speech);
    expect(l.bargeIns).toEqual(["local_vad"]);
    expect(energy(l.sent)).toBe(0);
  });
});
