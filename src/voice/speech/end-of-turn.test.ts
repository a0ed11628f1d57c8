import { describe, expect, it } from "vitest";
import { endOfTurnSilence, resolveEndOfTurn } from "./end-of-turn.js";

const adaptive = resolveEndOfTurn({ mode: "adaptive", minMs: 300, maxMs: 1500 }, 800);

describe("endOfTurnSilence", () => {
  it("fixed mode is always the configured silence", () => {
    const fixed = resolveEndOfTurn({}, 800);
    expect(endOfTurnSilence("I want to fly to Boston.", fixed).ms).toBe(800);
    expect(endOfTurnSilence("and", fixed).ms).toBe(800);
  });

  it("a finished sentence ends the turn after the shortest silence", () => {
    expect(endOfTurnSilence("I want to fly to Boston.", adaptive)).toEqual({
      ms: 300,
      reason: "sentence_end",
    });
    expect(endOfTurnSilence("Is it open today?", adaptive).ms).toBe(300);
  });

  it("a trailing conjunction or filler waits the longest", () => {
    expect(endOfTurnSilence("I want to fly to Boston and", adaptive)).toEqual({
      ms: 1500,
      reason: "incomplete",
    });
    expect(endOfTurnSilence("go forward ten meters because", adaptive).ms).toBe(1500);
    expect(endOfTurnSilence("the number is um", adaptive).ms).toBe(1500);
    expect(endOfTurnSilence("I need, uh,", adaptive).ms).toBe(1500);
  });

  it("unpunctuated words ending on a content word wait less than the fixed silence", () => {
    const r = endOfTurnSilence("go forward ten meters", adaptive);
    expect(r.reason).toBe("words");
    expect(r.ms).toBeLessThan(800);
    expect(r.ms).toBeGreaterThan(300);
  });

  it("nothing recognized yet: the fixed silence, within the bounds", () => {
    expect(endOfTurnSilence("", adaptive)).toEqual({ ms: 800, reason: "no_words" });
    const narrow = resolveEndOfTurn({ mode: "adaptive", minMs: 200, maxMs: 500 }, 800);
    expect(endOfTurnSilence("  ", narrow).ms).toBe(500);
  });

  it("a complete sentence commits earlier than the same words followed by 'and'", () => {
    expect(endOfTurnSilence("go forward ten meters", adaptive).ms).toBeLessThan(
      endOfTurnSilence("go forward ten meters and", adaptive).ms,
    );
  });
});

describe("resolveEndOfTurn", () => {
  it.each([
    [{ mode: "smart" }, "mode"],
    [{ minMs: 50 }, "minMs"],
    [{ minMs: 305 }, "minMs"],
    [{ maxMs: 20_000 }, "maxMs"],
    [{ minMs: 900, maxMs: 800 }, "maxMs"],
    [{ prepareAnswer: "yes" }, "prepareAnswer"],
  ])("refuses %j naming the key", (options, key) => {
    expect(() => resolveEndOfTurn(options as never, 800)).toThrow(
      expect.objectContaining({
        code: "config_invalid",
        message: expect.stringContaining(`endOfTurn.${key}`),
      }),
    );
  });
});
