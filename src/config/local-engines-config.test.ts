import { afterEach, describe, expect, it } from "vitest";
import { configuredProviders } from "../app.js";
import type { TalkProvider } from "../core/provider-types.js";
import { validateConfig } from "./load-config.js";

let providers: TalkProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.map((p) => p.close?.()));
  providers = [];
});

/** The health detail of the local recognizer built from `raw` (it names the decoder mode and the search). */
async function sphinxDetail(raw: Record<string, unknown>): Promise<string> {
  providers = configuredProviders(validateConfig(raw, { env: {} }).config);
  const sphinx = providers.find((p) => p.id === "pocketsphinx")!;
  return (await sphinx.health()).detail ?? "";
}

describe("talk.local.pocketsphinx", () => {
  it("defaults to resident decoders with the fast search", async () => {
    const detail = await sphinxDetail({});
    expect(detail).toContain("resident decoders");
    expect(detail).toContain("search fast");
  });

  it("passes the configured decoder mode and search to the provider", async () => {
    const perStream = await sphinxDetail({ talk: { local: { pocketsphinx: { decoder: "per-stream" } } } });
    expect(perStream).not.toContain("resident");
    expect(perStream).toContain("search full"); // the per-stream default
    const full = await sphinxDetail({ talk: { local: { pocketsphinx: { search: "full" } } } });
    expect(full).toContain("resident decoders");
    expect(full).toContain("search full");
  });

  it("refuses bad values and unknown keys, naming them", () => {
    const message = (raw: Record<string, unknown>): string => {
      try {
        validateConfig(raw, { env: {} });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("expected the configuration to be refused");
    };
    expect(message({ talk: { local: { pocketsphinx: { decoder: "daemon" } } } })).toContain(
      "talk.local.pocketsphinx.decoder",
    );
    expect(message({ talk: { local: { pocketsphinx: { maxIdleDecoders: -1 } } } })).toContain(
      "talk.local.pocketsphinx.maxIdleDecoders",
    );
    for (const partialIntervalMs of [-1, 10_001, 2.5, "500"])
      expect(message({ talk: { local: { pocketsphinx: { partialIntervalMs } } } })).toContain(
        "talk.local.pocketsphinx.partialIntervalMs",
      );
    expect(message({ talk: { local: { whisper: {} } } })).toContain("talk.local.whisper");
    expect(message({ talk: { output: { deltaEventIntervalMs: -1 } } })).toContain(
      "talk.output.deltaEventIntervalMs",
    );
  });
});
