import { describe, expect, it } from "vitest";
import { keepNamesFixInstalled } from "./keep-names-fix.js";

/** esbuild's keepNames helper, as tsx emits it into every module. */
const __name = <T>(target: T, value: string): T =>
  Object.defineProperty(target, "name", { value, configurable: true });

describe("keep-names-fix (tsx's per-closure name define, skipped where it changes nothing observable)", () => {
  it("is installed once and returns the target as defineProperty does", () => {
    expect(keepNamesFixInstalled()).toBe(true);
    const fn = [(): number => 1][0]!;
    expect(__name(fn, "close")).toBe(fn);
  });

  it("skips the helper's define on an anonymous function and on a function already so named", () => {
    const anonymous = [(): number => 1][0]!;
    expect(anonymous.name).toBe("");
    __name(anonymous, "close");
    expect(anonymous.name).toBe("");
    class Named {}
    __name(Named, "Named");
    expect(Named.name).toBe("Named");
    expect(Object.getOwnPropertyDescriptor(Named, "name")).toMatchObject({
      writable: false,
      configurable: true,
    });
  });

  it("lets every other define through: a rename, other attributes, other keys, other targets", () => {
    function original(): void {}
    __name(original, "renamed");
    expect(original.name).toBe("renamed");
    const anonymous = [(): number => 1][0]!;
    Object.defineProperty(anonymous, "name", { value: "writable", configurable: true, writable: true });
    expect(anonymous.name).toBe("writable");
    const other = [(): number => 2][0]!;
    Object.defineProperty(other, "label", { value: "x", configurable: true });
    expect((other as unknown as { label: string }).label).toBe("x");
    const obj: { name?: string } = {};
    Object.defineProperty(obj, "name", { value: "plain", configurable: true });
    expect(obj.name).toBe("plain");
    expect(() => Object.defineProperty(Object.freeze({}), "x", { value: 1 })).toThrow(TypeError);
  });
});
