import { defineConfig } from "vitest/config";

// Unit tests live beside the code (src/**/*.test.ts); tests that need Redis,
// Chromium, child processes or the whole server live in test/.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
