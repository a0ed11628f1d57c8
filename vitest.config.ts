import { defineConfig } from "vitest/config";
import DurationSequencer from "./test/support/duration-sequencer.js";
import { ISOLATED_INTEGRATION } from "./test/support/isolated-files.js";

// Unit tests live beside the code (src/**/*.test.ts); tests that need Redis,
// Chromium, child processes or the whole server live in test/.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two files at a time on the 2-core CI machine (vitest's default is cores - 1 = one): most
    // integration files wait on real time (audio paced at 1x, Chromium, child processes), so two
    // overlap well. Three took the run from 441 to 423 s only, with more real-time tests starved
    // beside each other (docs/performance.md, "The test suite").
    maxWorkers: 2,
    // Longest files first (test/support/file-durations.json), so no long file starts last and runs alone.
    sequence: { sequencer: DurationSequencer },
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // The client messages the stand-ins receive are captured and type-checked against the vendors' SDKs at the end.
    // The server processes the tests start run from a bundle built once per run (test/support/child-bundle.ts).
    globalSetup: ["./test/wire/global-setup.ts", "./test/support/child-bundle-setup.ts"],
    projects: [
      {
        extends: true,
        // Unit files share one module graph per worker: importing the code under test again for each
        // of ~180 small files cost more than running them. They keep no state between files (fake
        // timers are restored in afterEach; nothing is mocked at module level).
        test: { name: "unit", include: ["src/**/*.test.ts"], isolate: false },
      },
      {
        extends: true,
        // Integration files share a worker's module graph too: each closes the servers, browsers and
        // child processes it starts, and importing src again for each of ~130 files cost 2 CPU-s a file
        // (the suite: 911 -> 665 s, docs/performance.md "The test suite").
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: [...ISOLATED_INTEGRATION],
          isolate: false,
        },
      },
      {
        extends: true,
        // Files that change what every module in the process sees get a process of their own.
        test: { name: "integration-isolated", include: [...ISOLATED_INTEGRATION] },
      },
    ],
  },
});
