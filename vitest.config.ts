import { defineConfig } from "vitest/config";

// Unit tests live beside the code (src/**/*.test.ts); tests that need Redis,
// Chromium, child processes or the whole server live in test/.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two files at a time on the 2-core CI machine (vitest's default is cores - 1 = one): most
    // integration files wait on real time (audio paced at 1x, Chromium, child processes), so two
    // overlap well; the suite stays under 15 minutes.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // The client messages the stand-ins receive are captured and type-checked against the vendors' SDKs at the end.
    globalSetup: ["./test/wire/global-setup.ts"],
  },
});
