import type * as TraceSdkModule from "@opentelemetry/sdk-trace";
import type { Sampler, SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TalkLogger } from "../core/index.js";

/** The tracing SDK's classes, imported only when an exporter is asked for (about 10 MB of RSS otherwise carried). */
type TraceSdk = typeof TraceSdkModule;

/**
 * The OpenTelemetry tracer provider of the process, configured by the
 * standard `OTEL_*` environment variables, or none:
 *
 * - exporter: `OTEL_TRACES_EXPORTER` (`otlp`, `console`, `none`; a list is
 *   allowed). Unset: OTLP when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 *   `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else no tracing at all (no
 *   exporter unless one is asked for). `OTEL_SDK_DISABLED=true` turns it off.
 *   OTLP is HTTP with JSON bodies (`@opentelemetry/exporter-trace-otlp-http`,
 *   which reads the endpoint, headers, timeout and compression variables
 *   itself); another `OTEL_EXPORTER_OTLP_*PROTOCOL` is logged and ignored.
 * - sampling: `OTEL_TRACES_SAMPLER` (`always_on`, `always_off`,
 *   `traceidratio`, `parentbased_always_on` (default),
 *   `parentbased_always_off`, `parentbased_traceidratio`) with
 *   `OTEL_TRACES_SAMPLER_ARG` (the ratio, default 1).
 * - batching: `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BSP_MAX_QUEUE_SIZE`,
 *   `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, `OTEL_BSP_EXPORT_TIMEOUT`.
 * - resource: `OTEL_SERVICE_NAME` (default `talkgate`) and
 *   `OTEL_RESOURCE_ATTRIBUTES`; `service.instance.id` is the worker id.
 *
 * The SDK, the exporter and the resource detectors are imported only when
 * tracing is on: a server without it does not load them.
 */
export async function createTraceProvider(
  env: NodeJS.ProcessEnv,
  workerId: string,
  logger: TalkLogger,
): Promise<TracerProvider | undefined> {
  if ((env["OTEL_SDK_DISABLED"] ?? "").trim().toLowerCase() === "true") return undefined;
  const names = exporterNames(env, logger);
  if (names.length === 0) return undefined;
  const [sdk, { OTLPTraceExporter }, { detectResources, envDetector, resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  const exporters: SpanExporter[] = names.map((name) =>
    name === "otlp" ? new OTLPTraceExporter() : new sdk.ConsoleSpanExporter(),
  );
  const protocol = env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] ?? env["OTEL_EXPORTER_OTLP_PROTOCOL"];
  if (protocol !== undefined && protocol !== "http/json") {
    logger.warn({ protocol }, "tracing: only OTLP http/json is built in; exporting with http/json");
  }
  const detected = detectResources({ detectors: [envDetector] });
  const resource = resourceFromAttributes({
    "service.name": env["OTEL_SERVICE_NAME"] ?? "talkgate",
    "service.instance.id": workerId,
  }).merge(detected);
  const batch = {
    scheduledDelayMillis: positiveInt(env, "OTEL_BSP_SCHEDULE_DELAY", 5000, logger),
    maxQueueSize: positiveInt(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, logger),
    maxExportBatchSize: positiveInt(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, logger),
    exportTimeoutMillis: positiveInt(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000, logger),
  };
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerFrom(sdk, env, logger),
    spanProcessors: exporters.map((exporter) => new sdk.BatchSpanProcessor({ exporter, ...batch })),
  });
  logger.info(
    {
      exporters: exporters.map((e) => e.constructor.name),
      serviceName: env["OTEL_SERVICE_NAME"] ?? "talkgate",
    },
    "tracing on",
  );
  return provider;
}

/** The exporters asked for, known names only ("otlp", "console"; unknown ones are logged and ignored). */
function exporterNames(env: NodeJS.ProcessEnv, logger: TalkLogger): ("otlp" | "console")[] {
  const named = env["OTEL_TRACES_EXPORTER"];
  const endpoint = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? env["OTEL_EXPORTER_OTLP_ENDPOINT"];
  const names =
    named === undefined || named.trim() === ""
      ? endpoint
        ? ["otlp"]
        : []
      : named
          .split(",")
          .map((n) => n.trim().toLowerCase())
          .filter(Boolean);
  if (names.includes("none")) return [];
  const out: ("otlp" | "console")[] = [];
  for (const name of new Set(names)) {
    if (name === "otlp" || name === "console") out.push(name);
    else logger.warn({ exporter: name }, "tracing: unknown OTEL_TRACES_EXPORTER entry ignored");
  }
  return out;
}

function samplerFrom(sdk: TraceSdk, env: NodeJS.ProcessEnv, logger: TalkLogger): Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = sdk;
  const name = (env["OTEL_TRACES_SAMPLER"] ?? "parentbased_always_on").trim().toLowerCase();
  const ratio = (): number => {
    const raw = env["OTEL_TRACES_SAMPLER_ARG"];
    const value = raw === undefined || raw.trim() === "" ? 1 : Number(raw);
    if (Number.isFinite(value) && value >= 0 && value <= 1) return value;
    logger.warn({ OTEL_TRACES_SAMPLER_ARG: raw }, "tracing: sampler ratio must be 0..1; using 1");
    return 1;
  };
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio());
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      logger.warn({ OTEL_TRACES_SAMPLER: name }, "tracing: unknown sampler; using parentbased_always_on");
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number, logger: TalkLogger): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  logger.warn({ [name]: raw }, "tracing: not a positive integer; using the default");
  return fallback;
}
