/** Counters of the telephony surface, for logs, /metrics and tests (rejected frames by reason, refused sockets). */
export class TelephonyStats {
  readonly rejectedFrames = new Map<string, number>();
  readonly refusedSockets = new Map<string, number>();
  callsStarted = 0;
  /** ms from provider/local speech onset to `clear` sent, most recent last (bounded). */
  readonly bargeInToClearMs: number[] = [];

  rejectFrame(reason: string): number {
    const n = (this.rejectedFrames.get(reason) ?? 0) + 1;
    this.rejectedFrames.set(reason, n);
    return n;
  }

  refuseSocket(reason: string): void {
    this.refusedSockets.set(reason, (this.refusedSockets.get(reason) ?? 0) + 1);
  }

  snapshot(): { rejectedFrames: Record<string, number>; refusedSockets: Record<string, number>; callsStarted: number } {
    return {
      rejectedFrames: Object.fromEntries(this.rejectedFrames),
      refusedSockets: Object.fromEntries(this.refusedSockets),
      callsStarted: this.callsStarted,
    };
  }
}
