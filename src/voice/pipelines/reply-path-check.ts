import type { AgentProvider, RealtimeProvider, SttProvider } from "../../core/index.js";
import type { ReplyPath } from "./brain-options.js";

/** Why a realtime session cannot run a reply path; undefined when it can. */
export interface ReplyPathProblem {
  /** Stable: provider_unsupported, no_stt_provider, no_agent_provider. */
  reason: "provider_unsupported" | "no_stt_provider" | "no_agent_provider";
  message: string;
}

/**
 * Checks a reply path against the providers a session would run it with,
 * before the session exists: the realtime provider must declare it
 * (`capabilities.replyPaths`, absent: native only), bridge and brain need an
 * STT provider (the caller's ears), brain an agent (the planner).
 */
export function replyPathProblem(
  path: ReplyPath,
  realtime: RealtimeProvider,
  local: { stt: SttProvider | undefined; agent: AgentProvider | undefined },
): ReplyPathProblem | undefined {
  const declared = realtime.capabilities.replyPaths ?? ["native"];
  if (!declared.includes(path))
    return {
      reason: "provider_unsupported",
      message: `Realtime provider "${realtime.id}" cannot run reply path "${path}" (it declares ${declared.join(", ")}).`,
    };
  if (path === "native") return undefined;
  if (!local.stt)
    return {
      reason: "no_stt_provider",
      message: `Reply path "${path}" transcribes the caller locally, and no STT provider is configured.`,
    };
  if (path === "brain" && !local.agent)
    return {
      reason: "no_agent_provider",
      message: `Reply path "brain" is answered by the agent, and no agent provider is configured.`,
    };
  return undefined;
}
