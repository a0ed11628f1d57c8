/**
 * What the realtime providers' tests share: a tool definition and a wait for
 * a provider event. Test-only.
 */
import type { RealtimeProviderEvent } from "../../src/core/provider-types.js";

export { rejection as rejectionOf } from "./cluster-contract.js";

export const LOOKUP_ORDER_TOOL = Object.freeze({
  name: "lookup_order",
  description: "Finds an order",
  parameters: { type: "object", properties: { id: { type: "string" } } },
});

/** Resolves once an event in `events` (a list the provider appends to) satisfies `pred`. */
export function eventually(
  events: readonly RealtimeProviderEvent[],
  pred: (e: RealtimeProviderEvent) => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (events.some(pred)) resolve();
      else setTimeout(check, 5);
    };
    check();
  });
}
