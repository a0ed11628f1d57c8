import type { TalkLogger } from "../../core/index.js";
import type { RealtimeProvider, RealtimeToolDefinition } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import { exportToolsForProvider } from "../../core/index.js";
import type { ToolOwnership } from "./brain-options.js";
import type { PipelineToolDispatcher } from "./pipeline-options.js";

/**
 * The tools a realtime provider session is offered, by the session's latched
 * ownership (seed 003): provider-native sessions (native, bridge) get the
 * canonical tools through the provider's sanitizing export; transport-only
 * sessions (brain) get none. The tools are the ones offered to `session`
 * (definitionsFor): a session with no call behind it is not offered the call
 * tools it could never run.
 */
export function providerToolsFor(
  ownership: ToolOwnership,
  tools: PipelineToolDispatcher | undefined,
  provider: RealtimeProvider,
  logger: TalkLogger,
  session?: TalkSession,
): RealtimeToolDefinition[] {
  if (ownership === "transport_only" || !tools) return [];
  const offered = (session && tools.definitionsFor?.(session)) ?? tools.definitions;
  if (!offered) return [];
  const exported = exportToolsForProvider(offered, provider.capabilities.toolSchema);
  if (exported.skipped.length > 0) {
    logger.warn(
      { provider: provider.id, skipped: exported.skipped },
      "tools the provider cannot declare were left out",
    );
  }
  return exported.tools;
}
