/**
 * Plays the assistant's audio (talk.audio PCM16 chunks) gaplessly through
 * Web Audio and stops it at once on barge-in. An AnalyserNode after the
 * player measures what is really played: `audibleMs` counts 50 ms windows
 * whose level is above silence, `playedMs` the scheduled audio that ran.
 * `position()` is what the speaker has played of the latest output item (the
 * heard position the page reports to the server, which truncates a cancelled
 * answer there).
 */

const START_DELAY_S = 0.04;
const AUDIBLE_RMS = 0.005;

export class Player {
  /** @param {AudioContext} context */
  constructor(context) {
    this.context = context;
    this.output = context.createGain();
    this.analyser = context.createAnalyser();
    this.analyser.fftSize = 1024;
    this.output.connect(this.analyser);
    this.analyser.connect(context.destination);
    /** @type {{source: AudioBufferSourceNode, start: number, end: number, itemId: string}[]} */
    this.scheduled = [];
    this.nextTime = 0;
    this.stats = { chunks: 0, playedMs: 0, audibleMs: 0, stops: 0, firstPlayAt: undefined };
    /** Per output item (the latest few): its chunks' [start, end] on the context clock, cut at a stop. */
    this.items = new Map();
    this.samples = new Float32Array(this.analyser.fftSize);
    this.meter = setInterval(() => this.#measure(), 50);
  }

  /** Queues one chunk right after the previous one. Returns its start time on the context clock. */
  enqueue(pcm, sampleRate, itemId) {
    const { context } = this;
    if (pcm.length === 0) return undefined;
    const buffer = context.createBuffer(1, pcm.length, sampleRate);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) data[i] = pcm[i] / 0x8000;
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    const start = Math.max(this.nextTime, context.currentTime + START_DELAY_S);
    const entry = { source, start, end: start + buffer.duration, itemId };
    source.onended = () => {
      const i = this.scheduled.indexOf(entry);
      if (i < 0) return;
      this.scheduled.splice(i, 1);
      this.stats.playedMs += buffer.duration * 1000;
    };
    source.start(start);
    this.scheduled.push(entry);
    const spans = this.#spans(itemId);
    const last = spans.at(-1);
    if (last && Math.abs(last[1] - start) < 1e-6) last[1] = entry.end;
    else spans.push([start, entry.end]);
    this.nextTime = entry.end;
    this.stats.chunks += 1;
    return start;
  }

  /** True while scheduled audio has not finished. */
  get playing() {
    return this.scheduled.length > 0;
  }

  /** Seconds of queued audio still to play. */
  get queuedSeconds() {
    return Math.max(0, this.nextTime - this.context.currentTime);
  }

  /** Stops everything now (barge-in, cancellation). Returns true when something was playing. */
  stop() {
    const now = this.context.currentTime;
    const had = this.scheduled.length > 0;
    for (const entry of this.scheduled) {
      if (entry.start < now) this.stats.playedMs += (Math.min(now, entry.end) - entry.start) * 1000;
      entry.source.onended = null;
      try {
        entry.source.stop();
      } catch {
        // Already stopped.
      }
      entry.source.disconnect();
    }
    this.scheduled = [];
    this.nextTime = now;
    // What was not played by now never will be: the item's heard position stops here.
    for (const spans of this.items.values()) {
      for (const span of spans) span[1] = Math.min(span[1], Math.max(span[0], now));
    }
    if (had) this.stats.stops += 1;
    return had;
  }

  /**
   * What the speaker has played of the latest item that started playing:
   * `{itemId, playedMs}` from that item's first sample; undefined before any.
   */
  position() {
    const now = this.context.currentTime;
    let latest;
    for (const [itemId, spans] of this.items) if (spans.length && spans[0][0] <= now) latest = itemId;
    if (latest === undefined) return undefined;
    let played = 0;
    for (const [start, end] of this.items.get(latest)) if (start < now) played += Math.min(now, end) - start;
    return { itemId: latest, playedMs: Math.round(played * 1000) };
  }

  #spans(itemId) {
    let spans = this.items.get(itemId);
    if (!spans) {
      spans = [];
      this.items.set(itemId, spans);
      if (this.items.size > 8) this.items.delete(this.items.keys().next().value);
    }
    return spans;
  }

  /** Output level 0..1 (RMS of the last analyser window). */
  level() {
    this.analyser.getFloatTimeDomainData(this.samples);
    let sum = 0;
    for (const s of this.samples) sum += s * s;
    return Math.sqrt(sum / this.samples.length);
  }

  close() {
    clearInterval(this.meter);
    this.stop();
  }

  #measure() {
    if (this.context.state !== "running") return;
    if (this.level() > AUDIBLE_RMS) {
      this.stats.audibleMs += 50;
      this.stats.firstPlayAt ??= performance.now();
    }
  }
}
