import type { TalkLogger } from "../core/index.js";
import type { TokenAuthorizer } from "./auth.js";
import type { GatewayConnection } from "./gateway-connection.js";
import type { GatewayDeps } from "./gateway-deps.js";
import type { GatewayMetrics } from "./gateway-metrics.js";
import type { GatewayOptions } from "./gateway-options.js";
import type { RpcDispatcher } from "./rpc-dispatcher.js";
import type { SendQueueBudget } from "./send-queue-budget.js";
import type { SessionOwnership } from "./session-owners.js";
import type { TalkModeStore } from "./talk-mode-store.js";

/** What the server's plugins share. Internal to src/gateway; not exported from index.ts. */
export interface GatewayState {
  readonly options: GatewayOptions;
  readonly deps: GatewayDeps;
  readonly auth: TokenAuthorizer;
  readonly dispatcher: RpcDispatcher;
  readonly sessions: SessionOwnership;
  readonly mode: TalkModeStore;
  readonly metrics: GatewayMetrics;
  /** The bounds on replies queued and not read, shared by every /talk connection. */
  readonly budget: SendQueueBudget;
  readonly logger: TalkLogger;
  readonly connections: Set<GatewayConnection>;
  /** False once close() began: new connections are refused and /readyz fails. */
  readonly accepting: boolean;
}
