/** Counters of the telephony surface, for logs, /metrics and tests (rejected frames by reason, refused sockets). */
export class TelephonyStats {
  readonly rejectedFrames = new Map<string, number>();
  readonly refusedSockets = new Map<string, number>();
  callsStarted = 0;
  /** Latency figures by name (barge_in_to_clear, speech_end_to_first_audio), ms, most recent last (at most 1000 each). */
  readonly latencies = new Map<string, number[]>();

  recordLatency(name: string, ms: number): void {
    let list = this.latencies.get(name);
    if (!list) this.latencies.set(name, (list = []));
    list.push(ms);
    if (list.length > 1000) list.shift();
  }

  rejectFrame(reason: string): number {
    const n = (this.rejectedFrames.get(reason) ?? 0) + 1;
    this.rejectedFrames.set(reason, n);
    return n;
  }

  refuseSocket(reason: string): void {
    this.refusedSockets.set(reason, (this.refusedSockets.get(reason) ?? 0) + 1);
  }

  snapshot(): {
    rejectedFrames: Record<string, number>;
    refusedSockets: Record<string, number>;
    callsStarted: number;
  } {
    return {
      rejectedFrames: Object.fromEntries(this.rejectedFrames),
      refusedSockets: Object.fromEntries(this.refusedSockets),
      callsStarted: this.callsStarted,
    };
  }
}
