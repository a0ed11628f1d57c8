// A real talkgate worker for the multi-process cluster tests: the production
// `serve` path (config file + env, createApp, drain on SIGTERM) with two test
// additions, reported as JSON log lines with a `probe` field on stdout:
//
// - TALKGATE_TEST_AGENT=slow registers an agent that hangs until its
//   AbortSignal fires (probe agent-started / agent-aborted); otherwise the
//   local agent answers.
// - stdin takes JSON lines {cmd:"enqueue",kind,jobId,finish?} / {cmd:"cancel",jobId};
//   a worker with the "media" role runs outbound-call jobs that hang until
//   cancelled (probe job-started / job-aborted), or end at once when enqueued
//   with finish: true; every worker reports the cluster-wide job events it
//   sees (probe job-event). The production app registers telephony's own
//   outbound-call handler (real Twilio dials); here the probe handler takes its
//   place, so the app's registration of that kind is dropped, unless
//   TALKGATE_TEST_OUTBOUND=telephony keeps telephony's handler (dials to the
//   configured Twilio REST API, a local fake in the tests).
//
// Usage: node --import tsx test/support/cluster-server.ts [config.json]
import { createInterface } from "node:readline";
import type { App } from "../../src/app.js";
import { runServe } from "../../src/cli/serve.js";
import { type JobHandler, JobQueue } from "../../src/cluster/job-queue.js";
import { TalkError } from "../../src/core/errors.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentProvider,
  TalkProvider,
} from "../../src/core/provider-types.js";
import { createLocalProviders } from "../../src/providers/index.js";

let log: ((fields: Record<string, unknown>) => void) | undefined;

// The test process holds this worker's stdin (a pipe). When that process is gone (a beforeAll
// that timed out never reaches the afterAll that kills its workers; a test run killed by hand),
// stdin ends and the worker exits: an orphan would otherwise keep serving, and keep a core
// busy, for the rest of the suite (seen: five orphans at 1-5% CPU each after one run).
const commands = createInterface({ input: process.stdin });
commands.on("close", () => process.exit(0));

const telephonyOutbound = process.env.TALKGATE_TEST_OUTBOUND === "telephony";
const registerHandler = JobQueue.prototype.process;
let probeRegistration = false;
if (!telephonyOutbound)
  JobQueue.prototype.process = function process<T>(
    this: JobQueue,
    kind: string,
    handler: JobHandler<T>,
  ): void {
    if (kind === "outbound-call" && !probeRegistration) return;
    registerHandler.call(this, kind, handler as JobHandler);
  };

class ProbeAgent implements AgentProvider {
  readonly kind = "agent" as const;
  readonly id = "slow-agent";
  readonly label = "Slow test agent (hangs until aborted)";
  readonly capabilities = { local: true, streaming: true };

  async health(): Promise<{ ok: boolean }> {
    return { ok: true };
  }

  async *consult(request: AgentConsultRequest): AsyncIterable<AgentDelta> {
    log?.({ probe: "agent-started" });
    await new Promise<never>((_resolve, reject) => {
      const onAbort = (): void => {
        log?.({ probe: "agent-aborted", reason: String(request.signal.reason) });
        reject(new TalkError("cancelled"));
      };
      if (request.signal.aborted) onAbort();
      else request.signal.addEventListener("abort", onAbort, { once: true });
    });
    yield { type: "done" };
  }
}

const slow = process.env.TALKGATE_TEST_AGENT === "slow";
const providers: TalkProvider[] = slow
  ? [...createLocalProviders({ agent: false }), new ProbeAgent()]
  : createLocalProviders();

function onListening(app: App): void {
  log = (fields) => app.logger.info(fields, "probe");
  const jobs = app.cluster.jobs;
  jobs.on("job", (event) => log?.({ probe: "job-event", ...event }));
  probeRegistration = true;
  if (!telephonyOutbound) registerProbeJobs(app);
  commands.on("line", (line) => {
    void (async () => {
      const cmd = JSON.parse(line) as {
        cmd: string;
        kind?: "outbound-call" | "meeting-bot";
        jobId: string;
        finish?: boolean;
      };
      if (cmd.cmd === "enqueue") {
        const { id } = await jobs.enqueue(
          cmd.kind ?? "outbound-call",
          { to: "+15550100", ...(cmd.finish ? { finish: true } : {}) },
          { jobId: cmd.jobId },
        );
        log?.({ probe: "enqueued", jobId: id });
      } else if (cmd.cmd === "cancel") {
        log?.({
          probe: "cancel-result",
          jobId: cmd.jobId,
          outcome: await jobs.cancel(cmd.jobId, "test cancel"),
        });
      }
    })().catch((err: unknown) => log?.({ probe: "command-failed", error: String(err) }));
  });
}

/** Outbound-call jobs that hang until cancelled (probe job-started / job-aborted), or end at once with finish. */
function registerProbeJobs(app: App): void {
  app.cluster.jobs.process<{ to: string; finish?: boolean }>(
    "outbound-call",
    { role: "media" },
    async (job, signal) => {
      log?.({ probe: "job-started", jobId: job.id, attempt: job.attempt });
      if (job.data.finish) return;
      await new Promise<void>((resolve) => {
        const onAbort = (): void => {
          log?.({ probe: "job-aborted", jobId: job.id, reason: String(signal.reason) });
          resolve();
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      signal.throwIfAborted();
    },
  );
}

await runServe({ configPath: process.argv[2], app: { providers }, onListening });
