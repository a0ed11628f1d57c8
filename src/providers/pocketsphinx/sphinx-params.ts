/** One pocketsphinx decoder setting (name without the leading "-"), typed as the library declares it. */
export type SphinxParam =
  | { name: string; type: "string"; value: string }
  | { name: string; type: "int"; value: number }
  | { name: string; type: "float"; value: number }
  | { name: string; type: "boolean"; value: boolean };

/**
 * Search settings, measured on the pocketsphinx-testdata recordings with
 * `bench/pocketsphinx.bench.ts` (figures in docs/providers.md):
 *
 * - `"full"`: pocketsphinx's defaults, all three passes (tree search, flat
 *   lexicon rescoring, best path over the lattice).
 * - `"fast"`: no flat-lexicon pass, at most 3,000 active HMMs per frame (the
 *   default allows 30,000) and the 2 best Gaussians per senone scored in full
 *   (`-topn 2`, default 4): about half of the decoding CPU. On a resident
 *   decoder the word error rate on those recordings stayed the same (19 vs 21
 *   errors in 85 words); on a fresh decoder per stream it rose.
 */
export type SphinxSearch = "full" | "fast";

export const SEARCH_PRESETS: Readonly<Record<SphinxSearch, readonly SphinxParam[]>> = Object.freeze({
  full: [],
  fast: [
    { name: "fwdflat", type: "boolean", value: false },
    { name: "maxhmmpf", type: "int", value: 3000 },
    { name: "topn", type: "int", value: 2 },
  ],
});

/** As command-line arguments of pocketsphinx_continuous. */
export function sphinxArgs(params: readonly SphinxParam[]): string[] {
  return params.flatMap((p) => [
    `-${p.name}`,
    p.type === "boolean" ? (p.value ? "yes" : "no") : String(p.value),
  ]);
}
