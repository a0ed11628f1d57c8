import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "coverage/",
      "data/",
      "bench/out/",
      "scratch*/",
      "test/wire/generated/",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-imports": "off",
    },
  },
  {
    // The talk page (web/) and the console (web/console/): plain browser ES modules, served as files.
    files: ["web/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: Object.fromEntries(
        [
          "window",
          "document",
          "location",
          "history",
          "navigator",
          "localStorage",
          "sessionStorage",
          "fetch",
          "URL",
          "Node",
          "performance",
          "setTimeout",
          "clearTimeout",
          "setInterval",
          "clearInterval",
          "requestAnimationFrame",
          "matchMedia",
          "WebSocket",
          "URLSearchParams",
          "HTMLInputElement",
          "AudioContext",
          "AudioWorkletNode",
          "atob",
          "btoa",
          "console",
          // AudioWorkletGlobalScope (capture-worklet.js)
          "AudioWorkletProcessor",
          "registerProcessor",
          "sampleRate",
        ].map((name) => [name, "readonly"]),
      ),
    },
  },
  {
    // Layering: src/core never imports a surface (telephony, meetings, gateway)
    // nor a vendor edge (providers, cluster implementations).
    // Tests beside core code may drive it with real engines (espeak-ng, pocketsphinx).
    files: ["src/core/**/*.ts"],
    ignores: ["src/core/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/telephony/**",
                "**/meetings/**",
                "**/gateway/**",
                "**/providers/**",
                "**/cluster/**",
                "**/client/**",
              ],
              message: "src/core must not import a surface or a vendor edge.",
            },
          ],
        },
      ],
    },
  },
);
