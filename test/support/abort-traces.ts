/**
 * Entries in the set where Node's AbortSignal.any() records a signal's
 * dependants (0 when there is none). On Node 20 every combined signal leaves
 * one there for as long as the source lives (nodejs/node#55351), so a
 * long-lived signal (a session's, the process's shutdown) must show none
 * after the operations under it are done.
 */
export function dependantSignals(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  return key ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0) : 0;
}
