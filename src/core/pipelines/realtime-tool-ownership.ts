import type { TalkLogger } from "../logger.js";
import type { RealtimeProvider, RealtimeToolDefinition } from "../provider-types.js";
import { exportToolsForProvider } from "../tools/provider-tool-export.js";
import type { ToolOwnership } from "./brain-options.js";
import type { PipelineToolDispatcher } from "./pipeline-options.js";

/**
 * The tools a realtime provider session is offered, by the session's latched
 * ownership (seed 003): provider-native sessions (native, bridge) get the
 * canonical tools through the provider's sanitizing export; transport-only
 * sessions (brain) get none.
 */
export function providerToolsFor(
  ownership: ToolOwnership,
  tools: PipelineToolDispatcher | undefined,
  provider: RealtimeProvider,
  logger: TalkLogger,
): RealtimeToolDefinition[] {
  if (ownership === "transport_only" || !tools?.definitions) return [];
  const exported = exportToolsForProvider(tools.definitions, provider.capabilities.toolSchema);
  if (exported.skipped.length > 0) {
    logger.warn(
      { provider: provider.id, skipped: exported.skipped },
      "tools the provider cannot declare were left out",
    );
  }
  return exported.tools;
}
