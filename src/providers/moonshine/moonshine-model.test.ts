import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultMoonshineModelDir, MoonshineModel } from "./moonshine-model.js";

/** Debian's pocketsphinx-testdata "go forward ten meters" (16 kHz s16le) as -1..1 samples. */
function goForward(): Float32Array {
  const raw = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
  const pcm = new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
  return Float32Array.from(pcm, (s) => s / 32768);
}

describe("the Moonshine model's thread", () => {
  it("a model that cannot be loaded fails every decode with the same provider_unavailable, not loading it again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "moonshine-bad-"));
    writeFileSync(join(dir, "encoder_model.onnx"), "not a model");
    writeFileSync(join(dir, "decoder_model_merged.onnx"), "not a model");
    const model = new MoonshineModel(dir);
    const first = await model.transcribe(new Float32Array(16_000)).catch((err: unknown) => err);
    expect(first).toMatchObject({ code: "provider_unavailable" });
    expect((first as Error).message).toContain("The Moonshine model could not be loaded");
    // The same error, at once: a fallback recognizer answers without a thread started and refused each turn.
    await expect(model.transcribe(new Float32Array(16_000))).rejects.toBe(first);
    await model.close();
  });

  it("close() while decodes run and wait: what waited fails with cancelled, the thread is asked to stop, not cut inside a decode", async () => {
    const model = new MoonshineModel(defaultMoonshineModelDir()!);
    const decodes = Array.from({ length: 4 }, () => model.transcribe(goForward()));
    for (const d of decodes) d.catch(() => undefined);
    // The first answer: the thread goes straight on to the second decode, which close() lands inside.
    expect((await decodes[0]!).text).toBe("Go forward ten meters.");
    await model.close();
    for (const d of decodes.slice(1)) await expect(d).rejects.toMatchObject({ code: "cancelled" });
    expect(model.stats.waiting).toBe(0);
    // Still alive, and a closed model says so.
    await expect(model.transcribe(goForward())).rejects.toMatchObject({ code: "invalid_state" });
  });
});
