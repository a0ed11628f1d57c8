import { describe, expect, it } from "vitest";
import { resolveEndOfTurn } from "../speech/end-of-turn.js";
import { TurnEndpoint } from "./turn-endpoint.js";

const adaptive = resolveEndOfTurn({ mode: "adaptive", minMs: 300, maxMs: 1500 }, 800);

/** Silence (20 ms frames) until the endpoint says the turn is over, after `text` was recognized. */
function silenceUntilEnd(text: string): number {
  const e = new TurnEndpoint(adaptive);
  e.begin("t1");
  e.transcriptDelta("t1", text, false);
  if (e.speechEnded()) return e.silenceMs;
  while (!e.silence(20)) if (e.silenceMs > 5000) throw new Error("never ended");
  return e.silenceMs;
}

describe("TurnEndpoint", () => {
  it("the gate ends speech after the shortest endpoint in adaptive mode, the fixed one otherwise", () => {
    expect(new TurnEndpoint(adaptive).gateSilenceMs).toBe(300);
    expect(new TurnEndpoint(resolveEndOfTurn({}, 800)).gateSilenceMs).toBe(800);
  });

  it("commits earlier after a complete sentence than after a trailing 'and'", () => {
    expect(silenceUntilEnd("go forward ten meters.")).toBe(300);
    expect(silenceUntilEnd("go forward ten meters")).toBeLessThan(800);
    expect(silenceUntilEnd("go forward ten meters and")).toBe(1500);
  });

  it("words that arrive during the silence move the endpoint", () => {
    const e = new TurnEndpoint(adaptive);
    e.begin("t1");
    expect(e.speechEnded()).toBe(false);
    e.transcriptDelta("t1", "I need a taxi and", false);
    expect(e.silence(600)).toBe(false);
    e.transcriptDelta("t1", "I need a taxi.", true);
    expect(e.silence(20)).toBe(true);
  });

  it("speech before the endpoint continues the turn; another turn's words are ignored", () => {
    const e = new TurnEndpoint(adaptive);
    e.begin("t1");
    e.transcriptDelta("t0", "stale words.", false);
    e.speechEnded();
    e.speechResumed();
    expect(e.silence(2000)).toBe(false);
    expect(e.speechEnded()).toBe(false);
    expect(e.silence(500)).toBe(true);
  });

  it("voice the gate has not confirmed as speech restarts the silence, as within the fixed gate's hangover", () => {
    const e = new TurnEndpoint(adaptive);
    e.begin("t1");
    e.transcriptDelta("t1", "go forward ten meters", false);
    expect(e.speechEnded()).toBe(false); // 300 ms of silence, the rule asks 550
    expect(e.silence(200)).toBe(false);
    e.voiceHeard(); // the next words begin: no onset yet
    expect(e.silence(300)).toBe(false); // 300 ms since that voice, not 800 since the speech
    expect(e.silence(240)).toBe(false);
    expect(e.silence(20)).toBe(true);
  });

  it("voice before any end of speech changes nothing", () => {
    const e = new TurnEndpoint(adaptive);
    e.begin("t1");
    e.voiceHeard();
    expect(e.silence(5000)).toBe(false);
  });

  it("frame(): the end of speech starts the count, speech holds it, voice restarts it, silence adds to it", () => {
    const e = new TurnEndpoint(adaptive);
    e.begin("t1");
    e.transcriptDelta("t1", "go forward ten meters", false); // the rule asks 550 ms
    const quiet = { speaking: false, voiced: false };
    expect(e.frame(undefined, { speaking: true, voiced: true }, 20)).toBe(false);
    expect(e.frame("speech-end", quiet, 20)).toBe(false);
    expect(e.silenceMs).toBe(300);
    expect(e.frame(undefined, quiet, 200)).toBe(false);
    expect(e.frame(undefined, { speaking: false, voiced: true }, 20)).toBe(false);
    expect(e.silenceMs).toBe(0);
    expect(e.frame(undefined, quiet, 540)).toBe(false);
    expect(e.frame(undefined, quiet, 20)).toBe(true);
  });

  describe("prepareDue: when the answer may be prepared, the fixed endpoint still ending the turn", () => {
    const fixed = resolveEndOfTurn({}, 800);
    const speaking = { speaking: true, voiced: true };
    const hangover = { speaking: true, voiced: false };

    /** 20 ms frames inside the fixed gate's hangover until prepareDue answers, ms of quiet; undefined: never. */
    function quietUntilPrepared(e: TurnEndpoint): number | undefined {
      for (let ms = 20; ms < 800; ms += 20) {
        expect(e.frame(undefined, hangover, 20)).toBe(false);
        if (e.prepareDue() !== undefined) return ms;
      }
      return undefined;
    }

    it("after a finished sentence at the adaptive rule's 300 ms, other words at its 550 (in 20 ms frames), inside the fixed gate's hangover", () => {
      for (const [text, at] of [
        ["I need a taxi.", 300],
        ["I need a taxi", 560], // the first 20 ms frame at or past 550
      ] as const) {
        const e = new TurnEndpoint(fixed);
        e.begin("t1");
        e.frame(undefined, speaking, 20);
        e.transcriptDelta("t1", text, false);
        expect(quietUntilPrepared(e)).toBe(at);
      }
    });

    it("not without words, not after a trailing 'and' before the fixed endpoint, and once per words", () => {
      const e = new TurnEndpoint(fixed);
      e.begin("t1");
      expect(quietUntilPrepared(e)).toBeUndefined();
      e.begin("t2");
      e.transcriptDelta("t2", "I need a taxi and", false);
      expect(quietUntilPrepared(e)).toBeUndefined();
      e.begin("t3");
      e.transcriptDelta("t3", "I need a taxi.", false);
      expect(quietUntilPrepared(e)).toBe(300);
      e.frame(undefined, hangover, 20);
      expect(e.prepareDue()).toBeUndefined(); // the same words: prepared already
      e.transcriptDelta("t3", "I need a taxi to the airport.", true);
      expect(e.prepareDue()).toBe("I need a taxi to the airport."); // new words, the caller still quiet
    });

    it("voice restarts the quiet; with prepareAnswer off nothing is ever due", () => {
      const e = new TurnEndpoint(fixed);
      e.begin("t1");
      e.transcriptDelta("t1", "I need a taxi.", false);
      for (let i = 0; i < 10; i++) e.frame(undefined, hangover, 20);
      e.frame(undefined, { speaking: true, voiced: true }, 20);
      expect(quietUntilPrepared(e)).toBe(300);
      const off = new TurnEndpoint(resolveEndOfTurn({ prepareAnswer: false }, 800));
      off.begin("t1");
      off.transcriptDelta("t1", "I need a taxi.", false);
      expect(quietUntilPrepared(off)).toBeUndefined();
    });
  });

  it("pauseChange: 'paused' once per quiet run at 200 ms of unvoiced audio (inside the fixed gate's hangover), 'resumed' at the next voice", () => {
    const e = new TurnEndpoint(resolveEndOfTurn({}, 800));
    e.begin("t1");
    const hangover = { speaking: true, voiced: false };
    const changes: string[] = [];
    for (let ms = 20; ms <= 700; ms += 20) {
      e.frame(undefined, ms === 400 || ms === 420 ? { speaking: true, voiced: true } : hangover, 20);
      const c = e.pauseChange();
      if (c) changes.push(`${c}@${ms}`);
    }
    expect(changes).toEqual(["paused@200", "resumed@400", "paused@620"]);
    e.speechResumed(); // speech confirmed again after a pause reported: also a resumption
    expect(e.pauseChange()).toBe("resumed");
    for (let ms = 20; ms <= 200; ms += 20) e.frame(undefined, hangover, 20);
    expect(e.pauseChange()).toBe("paused");
    e.speechResumed();
    expect(e.pauseChange()).toBe("resumed");
    expect(e.pauseChange()).toBeUndefined();
  });
});
