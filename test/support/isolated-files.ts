/**
 * Integration files that must not share a process with others (vitest.config.ts gives each its own):
 * what they change every module in the process sees. test/architecture/shared-process.test.ts fails
 * on a file that does such a thing without being listed here.
 */
export const ISOLATED_INTEGRATION: readonly string[] = [
  // A module-level vi.mock: the codecs replaced for every importer.
  "test/integration/echo-residual-fallback.test.ts",
  // OTEL_* in the environment: every app started in the process while they are set would trace.
  "test/integration/ops-traces.test.ts",
];

/** What only a file with a process of its own may do: replace modules or globals, register process-wide providers. */
export const PROCESS_WIDE: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /\bvi\.(mock|doMock|unmock|stubGlobal)\(/, what: "replaces a module or a global" },
  {
    pattern: /\bsetGlobal(TracerProvider|MeterProvider|Propagator|ContextManager)\b/,
    what: "sets an OpenTelemetry global",
  },
  { pattern: /process\.env(\.|\[")OTEL_/, what: "sets OTEL_* for every app the process starts" },
  { pattern: /\bsetGlobalDispatcher\(/, what: "sets undici's global dispatcher" },
];
