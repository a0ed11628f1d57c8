import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { createDirectiveParser, parseVoiceDirective, type DirectiveParseResult } from "./voice-directive.js";

/** Feeds the answer one character at a time and merges what the parser returns. */
function streamed(answer: string, maxDirectiveChars?: number): DirectiveParseResult & { heldUntil: number } {
  const parser = createDirectiveParser(maxDirectiveChars === undefined ? {} : { maxDirectiveChars });
  let text = "";
  let heldUntil = -1;
  const merged: DirectiveParseResult = { text: "" };
  [...answer].forEach((ch, i) => {
    const r = parser.push(ch);
    if (r.directive) Object.assign(merged, r);
    if (r.text.length > 0 && heldUntil < 0) heldUntil = i;
    text += r.text;
  });
  text += parser.flush().text;
  return { ...merged, text, heldUntil };
}

describe("voice directive parser", () => {
  it("recognises a leading directive and never passes its JSON on as text", () => {
    const r = parseVoiceDirective('{"voice":"nova","once":true,"speed":1.1}\nHello there.');
    expect(r.directive).toEqual({ voice: "nova", once: true, speed: 1.1 });
    expect(r.text).toBe("Hello there.");
    expect(r.ignoredKeys).toBeUndefined();
  });

  it("gives the same result streamed one character at a time", () => {
    const answer =
      '  {"voice":"nova","model":"m1","stability":0.5,"similarity":1,"style":0} Hi {not json} there.';
    const r = streamed(answer);
    expect(r.directive).toEqual({
      voice: "nova",
      model: "m1",
      stability: 0.5,
      similarity: 1,
      style: 0,
      once: false,
    });
    expect(r.text).toBe("Hi {not json} there.");
    expect(r.text).not.toContain("voice");
  });

  it("is session-wide without once and reply-only with once:true", () => {
    expect(parseVoiceDirective('{"voice":"a"} x').directive?.once).toBe(false);
    expect(parseVoiceDirective('{"voice":"a","once":false} x').directive?.once).toBe(false);
    expect(parseVoiceDirective('{"voice":"a","once":true} x').directive?.once).toBe(true);
  });

  it("passes text through at once when the answer does not start with {", () => {
    const parser = createDirectiveParser();
    expect(parser.push("  Hello")).toEqual({ text: "  Hello" });
    expect(parser.decided).toBe(true);
    expect(parser.push(' {"voice":"x"}')).toEqual({ text: ' {"voice":"x"}' });
  });

  it("holds text back only while the directive is open", () => {
    const parser = createDirectiveParser();
    expect(parser.push('{"voice":')).toEqual({ text: "" });
    expect(parser.push('"echo", "note": "a } in a string"}')).toMatchObject({
      directive: { voice: "echo" },
      text: "",
    });
    expect(parser.push("  Spoken")).toEqual({ text: "Spoken" });
  });

  it("reports unknown keys and invalid values instead of failing", () => {
    const r = parseVoiceDirective(
      '{"voice":"v","pitch":3,"speed":"fast","stability":2,"once":"yes","extra":{}} Text',
    );
    expect(r.directive).toEqual({ voice: "v", once: false });
    expect(r.ignoredKeys).toEqual(["pitch", "extra"]);
    expect(r.invalidKeys).toEqual(["stability", "speed", "once"]);
    expect(r.text).toBe("Text");
  });

  it("takes rate as an alias of speed, speed winning when both are given", () => {
    expect(parseVoiceDirective('{"rate":0.9} a').directive?.speed).toBe(0.9);
    expect(parseVoiceDirective('{"rate":0.9,"speed":1.2} a').directive?.speed).toBe(1.2);
  });

  it("speaks invalid JSON as text instead of dropping it", () => {
    const answer = '{"voice": nova} but this is said';
    expect(parseVoiceDirective(answer)).toEqual({ text: answer });
    expect(streamed(answer).text).toBe(answer);
  });

  it("speaks a JSON object without any voice key as text", () => {
    const answer = '{"name":"Ada"} is the record you asked for.';
    expect(parseVoiceDirective(answer)).toEqual({ text: answer });
  });

  it("gives up on a { that does not close within maxDirectiveChars and passes everything on", () => {
    const answer = "{ this looks like JSON but is a long spoken sentence " + "that goes on ".repeat(10);
    const r = streamed(answer, 60);
    expect(r.directive).toBeUndefined();
    expect(r.text).toBe(answer);
    // Released as soon as the bound is passed, not at the end of the answer.
    expect(r.heldUntil).toBe(60);
  });

  it("releases an unclosed { at flush", () => {
    const parser = createDirectiveParser();
    expect(parser.push('{"voice":"x"')).toEqual({ text: "" });
    expect(parser.flush()).toEqual({ text: '{"voice":"x"' });
  });

  it("handles escaped quotes and braces inside strings", () => {
    const r = streamed('{"voice":"a\\"}b","x":"{"} ok');
    expect(r.directive).toEqual({ voice: 'a"}b', once: false });
    expect(r.ignoredKeys).toEqual(["x"]);
    expect(r.text).toBe("ok");
  });

  it("rejects an invalid bound with config_invalid", () => {
    expect(() => createDirectiveParser({ maxDirectiveChars: 0 })).toThrow(TalkError);
  });
});
