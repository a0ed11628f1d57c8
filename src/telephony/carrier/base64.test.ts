import { describe, expect, it } from "vitest";
import { STRICT_BASE64, strictBase64End } from "./base64.js";

describe("strict base64 over bytes", () => {
  it("accepts exactly what STRICT_BASE64 accepts (non-empty, within the limit)", () => {
    const alphabet = ["A", "z", "0", "+", "/", "=", "$", "-", " "];
    // Every string of 1-5 characters over a small alphabet that mixes the base64 one, padding and others.
    const strings: string[] = [""];
    for (let length = 1; length <= 5; length++)
      for (const prefix of strings.filter((s) => s.length === length - 1))
        for (const c of alphabet) strings.push(prefix + c);
    for (const value of strings.filter((s) => s.length > 0)) {
      const bytes = Buffer.from(`"${value}"`, "latin1");
      const end = strictBase64End(bytes, 1, 1000);
      expect(end === bytes.length - 1, JSON.stringify(value)).toBe(STRICT_BASE64.test(value));
    }
  });

  it("refuses an empty value, one over the limit, and one without its closing quote", () => {
    expect(strictBase64End(Buffer.from('""'), 1, 100)).toBeUndefined();
    expect(strictBase64End(Buffer.from('"AAAAAAAA"'), 1, 4)).toBeUndefined();
    expect(strictBase64End(Buffer.from('"AAAA'), 1, 100)).toBeUndefined();
    expect(strictBase64End(Buffer.from('"AAAA"'), 1, 4)).toBe(5);
  });
});
