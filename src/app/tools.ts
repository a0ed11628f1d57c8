/**
 * Tool rules of the composition root (seed 003): one canonical registry of
 * the built-in tools and the embedder's, under the `agent.tools` policy, run
 * by one dispatcher; the pipelines get a small view of it.
 */
import type { TalkgateConfig } from "../config/index.js";
import type { TalkLogger } from "../core/index.js";
import type { BrainOptions } from "../voice/index.js";
import { resolveBrainOptions } from "../voice/index.js";
import type { PipelineToolDispatcher } from "../voice/index.js";
import type { RealtimeToolDefinition } from "../core/index.js";
import type { TalkRuntime } from "../core/index.js";
import { ToolDispatcher } from "../core/index.js";
import { ToolPolicy } from "../core/index.js";
import { ToolRegistry, type ToolDefinition } from "../core/index.js";
import { AGENT_CONSULT_TOOL, createAgentConsultTool } from "../voice/index.js";
import { CallControlRegistry } from "../core/index.js";
import {
  createCollectDigitsTool,
  createEndCallTool,
  createSendDtmfTool,
  createTransferCallTool,
} from "../core/index.js";
import { ConsultProgressChannel } from "../core/index.js";
import { createGetTimeTool } from "../core/index.js";
import { SessionTranscripts } from "../voice/index.js";
import type { AppProviders } from "./providers.js";

/** Tools that act on a phone call (CallControl). */
const CALL_TOOLS = new Set(["end_call", "send_dtmf", "transfer_call", "collect_digits"]);

export interface AppTools {
  /** Runs tool calls under the policy (the gateway's talk.client.toolCall uses it directly). */
  readonly dispatcher: ToolDispatcher;
  /** The pipelines' view: the dispatcher, the tools offered to realtime providers, and consult progress. */
  readonly pipeline: PipelineToolDispatcher;
  /** The tools the policy offers to a realtime provider. */
  realtimeDefinitions(): RealtimeToolDefinition[];
  /** The tools a client-owned session is offered: the policy's, without the call tools (no call is behind it). */
  clientDefinitions(): RealtimeToolDefinition[];
  /** Where telephony calls register their hang-up / DTMF / transfer controls for the call tools. */
  readonly callControls: CallControlRegistry;
}

export interface AppToolsInputs {
  config: TalkgateConfig;
  providers: AppProviders;
  runtime: TalkRuntime;
  brain: BrainOptions;
  /** The embedder's tools (CreateAppOptions.tools), registered after the built-in ones. */
  extra: readonly ToolDefinition[];
  logger: TalkLogger;
}

export function buildTools({ config, providers, runtime, brain, extra, logger }: AppToolsInputs): AppTools {
  const callControls = new CallControlRegistry();
  const progress = new ConsultProgressChannel();
  const transcripts = new SessionTranscripts();
  runtime.subscribeAll((event) => transcripts.observe(event));
  const registry = new ToolRegistry()
    .register(createGetTimeTool())
    .register(
      createAgentConsultTool({
        agent: () => providers.optional("agent"),
        session: (id) => {
          const s = runtime.getSession(id);
          return s && { metadata: s.metadata, history: transcripts.history(id) };
        },
        persona: config.agent.persona,
        brain: resolveBrainOptions(brain),
        progress,
      }),
    )
    .register(createEndCallTool(callControls))
    .register(createSendDtmfTool(callControls))
    .register(createTransferCallTool({ calls: callControls, targets: config.agent.transferTargets }))
    .register(createCollectDigitsTool({ calls: callControls, defaults: config.agent.collectDigits }));
  for (const tool of extra) registry.register(tool);
  const policy = new ToolPolicy({ allow: config.agent.tools.allow, deny: config.agent.tools.deny });
  // What a direct-tools surface may call: its selection inside the general policy, never the agent.
  const direct = config.agent.tools.direct;
  const directPolicy = new ToolPolicy({
    allow: direct.allow,
    // agent_consult would put an agent back into the turn.
    deny: [...direct.deny, AGENT_CONSULT_TOOL],
    within: policy,
  });
  const dispatcher = new ToolDispatcher({
    registry,
    policy: (session) => (session.brain === "direct-tools" ? directPolicy : policy),
    logger,
    clientResultTimeoutMs: config.agent.tools.clientResultTimeoutMs,
    maxParallelPerSession: config.agent.tools.maxParallelPerSession,
  });
  const realtimeDefinitions = () => registry.toRealtimeTools((name) => policy.isAllowed(name));
  const clientDefinitions = () => realtimeDefinitions().filter((t) => !CALL_TOOLS.has(t.name));
  // A view over the shared dispatcher (never the dispatcher mutated): definitions are read per session.
  const pipeline: PipelineToolDispatcher = {
    get definitions() {
      return realtimeDefinitions();
    },
    // A session without a call behind it (a meeting, a client's session) is not offered the call tools.
    definitionsFor: (session) => (callControls.get(session.id) ? realtimeDefinitions() : clientDefinitions()),
    progress,
    handleProviderCall: (session, request) => dispatcher.handleProviderCall(session, request),
    dispatch: (session, request) => dispatcher.dispatch(session, request),
    submitToolResult: (sessionId, callId, output) => dispatcher.submitToolResult(sessionId, callId, output),
  };
  return { dispatcher, pipeline, realtimeDefinitions, clientDefinitions, callControls };
}
