import type { Utterance } from "./utterance-segmenter.js";

/** One RTP source heard on a track: an SSRC or CSRC, with its audio level (0..1 linear, null when the stream carries none). */
export interface RtpSourceSample {
  source: number;
  level: number | null;
}

/** What the page saw on one remote track since its previous report (capture-framing.ts, `sources`). */
export interface TrackSourceReport {
  trackId: string;
  /** Synchronization sources (RTCRtpReceiver.getSynchronizationSources): the sender of the stream. */
  ssrc: RtpSourceSample[];
  /** Contributing sources (getContributingSources): the participants an SFU/mixer put into the stream. */
  csrc: RtpSourceSample[];
}

export interface SpeakerAttributionOptions {
  /** How long source reports are kept, ms (the longest utterance plus its wait for the floor). */
  historyMs: number;
  /** Reports this long before an utterance's detected start still count (pre-roll, report period), ms. Default 600. */
  leadMs?: number;
  /** Reports this long after its end still count (report period and transport), ms. Default 250. */
  tailMs?: number;
  /** Share of the utterance's source energy the winning source needs; less is ambiguous. Default 0.6. */
  dominance?: number;
  /** Levels below this are silence and do not count. Default 0.002 (about -54 dBov). */
  minLevel?: number;
  /** Active-speaker marks this long before an utterance's start still count, ms. Default 0 (a mark follows speech). */
  markLeadMs?: number;
  /** Active-speaker marks this long after its end still count (the page's lag, one poll), ms. Default 500. */
  markTailMs?: number;
}

/** Who spoke an utterance, and from which RTP source when one dominated it. */
export interface Attribution {
  speaker: string;
  /** The SSRC/CSRC that dominated the utterance, named or not (diagnostics). */
  rtpSource?: number;
}

/** The outcome of the source evidence alone: the dominant source, or nothing conclusive. */
type SourceVerdict = { source: number } | undefined;

/** One read of the page's active-speaker marks (who it showed as speaking then; empty: nobody). */
interface MarkRead {
  at: number;
  names: readonly string[];
}

interface Report {
  at: number;
  /** The stream's contributors: its CSRCs when it has any (a mixer / SFU stream), else its SSRCs. */
  samples: RtpSourceSample[];
}

export const UNKNOWN_SPEAKER = "unknown";

/**
 * Decides which participant spoke an utterance, from two kinds of evidence
 * the platform driver may give:
 *
 * - track names (`observe().speakers`): this remote track carries exactly one
 *   participant (mesh calls, the test room's tiles);
 * - source names (`observe().sources`): this RTP SSRC/CSRC is that
 *   participant (SFU platforms forward or mix several participants over a few
 *   receivers, and name the sources in their signalling).
 *
 * The capture script reports each track's active sources with their audio
 * levels a few times a second; an utterance's sources are the reports on its
 * track during it, weighted by level, and one source must dominate them
 * (`dominance`). The name comes from that source's entry in the source table,
 * else from the track's name.
 *
 * A third kind, for platforms whose audio names nobody (Zoom, Teams: mixed or
 * forwarded streams, sources not studied): the page's **active-speaker marks**
 * (`observe().activeSpeakers`, read every poll). The marks read during an
 * utterance (from its start to `markTailMs` after its end) must name one
 * participant in `dominance` of all the names marked, and nobody marked at
 * all says nothing.
 *
 * When two kinds disagree, or none names anyone, the speaker is "unknown":
 * never a guess (not the only participant, not the last speaker, not a
 * quieter named source beside a louder unnamed one).
 */
export class SpeakerAttribution {
  readonly #historyMs: number;
  readonly #leadMs: number;
  readonly #tailMs: number;
  readonly #dominance: number;
  readonly #minLevel: number;
  readonly #markLeadMs: number;
  readonly #markTailMs: number;
  readonly #marks: MarkRead[] = [];
  readonly #trackNames = new Map<string, string>();
  readonly #sourceNames = new Map<number, string>();
  readonly #reports = new Map<string, Report[]>();
  /** Source verdicts fixed when an utterance ended (the reports of its span are all in by then). */
  readonly #verdicts = new WeakMap<Utterance, SourceVerdict>();

  constructor(options: SpeakerAttributionOptions) {
    this.#historyMs = options.historyMs;
    this.#leadMs = options.leadMs ?? 600;
    this.#tailMs = options.tailMs ?? 250;
    this.#dominance = options.dominance ?? 0.6;
    this.#minLevel = options.minLevel ?? 0.002;
    this.#markLeadMs = options.markLeadMs ?? 0;
    this.#markTailMs = options.markTailMs ?? 500;
  }

  /** One read of the page's active-speaker marks (the driver's `activeSpeakers`; empty: nobody marked). */
  noteActiveSpeakers(names: readonly string[], at = Date.now()): void {
    this.#marks.push({ at, names: [...new Set(names.filter((n) => n !== ""))] });
    const horizon = at - this.#historyMs;
    let drop = 0;
    while (drop < this.#marks.length && this.#marks[drop]!.at < horizon) drop++;
    if (drop > 0) this.#marks.splice(0, drop);
  }

  /**
   * Names from one driver observation. Names are sticky: a participant who
   * left still owns the lines they spoke; a newer name for the same track or
   * source replaces the old one.
   */
  setNames(tracks: Readonly<Record<string, string>>, sources: Readonly<Record<string, string>> = {}): void {
    for (const [trackId, name] of Object.entries(tracks)) if (name) this.#trackNames.set(trackId, name);
    for (const [key, name] of Object.entries(sources)) {
      const source = Number(key);
      if (name && Number.isInteger(source) && source >= 0 && source <= 0xffff_ffff)
        this.#sourceNames.set(source, name);
    }
  }

  /** One page report of a track's active sources, received at `at` (server clock, ms). */
  note(report: TrackSourceReport, at = Date.now()): void {
    const samples = report.csrc.length > 0 ? report.csrc : report.ssrc;
    if (samples.length === 0) return;
    let list = this.#reports.get(report.trackId);
    if (!list) {
      list = [];
      this.#reports.set(report.trackId, list);
    }
    list.push({ at, samples });
    this.#prune(list, at);
  }

  /** Fixes the utterance's source verdict once it ends (later reports may belong to the next speaker). */
  follow(utterance: Utterance): void {
    void utterance.whenEnded().then(() => {
      this.#verdicts.set(utterance, this.#verdict(utterance, utterance.endedAt ?? Date.now()));
    });
  }

  /** The speaker of an utterance: final once it has ended, provisional while it is open. */
  speakerOf(utterance: Utterance): Attribution {
    const verdict = this.#verdicts.has(utterance)
      ? this.#verdicts.get(utterance)
      : this.#verdict(utterance, utterance.endedAt ?? Date.now());
    const trackName = this.#trackNames.get(utterance.trackId);
    const sourceName = verdict ? this.#sourceNames.get(verdict.source) : undefined;
    const markName = this.#markedSpeaker(utterance);
    const rtp = verdict ? { rtpSource: verdict.source } : {};
    const names = new Set([sourceName, trackName, markName].filter((n) => n !== undefined));
    // Kinds of evidence that disagree: one of them is wrong, and we cannot tell which.
    if (names.size !== 1) return { speaker: UNKNOWN_SPEAKER, ...rtp };
    return { speaker: [...names][0]!, ...rtp };
  }

  /** The one participant the page's marks showed as speaking during the utterance, if one dominates. */
  #markedSpeaker(utterance: Utterance): string | undefined {
    const from = utterance.startedAt - this.#markLeadMs;
    const to = (utterance.endedAt ?? Date.now()) + this.#markTailMs;
    const counts = new Map<string, number>();
    let total = 0;
    for (const read of this.#marks) {
      if (read.at < from || read.at > to) continue;
      for (const name of read.names) {
        counts.set(name, (counts.get(name) ?? 0) + 1);
        total += 1;
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [name, n] of counts) {
      if (n > bestCount) {
        best = name;
        bestCount = n;
      }
    }
    return best !== undefined && bestCount / total >= this.#dominance ? best : undefined;
  }

  /** Forgets a track's reports (its track ended). Names stay: lines already spoken keep their speaker. */
  dropTrack(trackId: string): void {
    this.#reports.delete(trackId);
  }

  #verdict(utterance: Utterance, endedAt: number): SourceVerdict {
    const list = this.#reports.get(utterance.trackId);
    if (!list) return undefined;
    const from = utterance.startedAt - this.#leadMs;
    const to = endedAt + this.#tailMs;
    const energy = new Map<number, number>();
    let total = 0;
    for (const report of list) {
      if (report.at < from || report.at > to) continue;
      const levelled = report.samples.filter((s) => s.level !== null);
      if (levelled.length === 0) {
        // No levels: a lone source is the one speaking; several are indistinguishable.
        if (report.samples.length === 1) {
          const source = report.samples[0]!.source;
          energy.set(source, (energy.get(source) ?? 0) + 1);
          total += 1;
        }
        continue;
      }
      for (const s of levelled) {
        if (s.level! < this.#minLevel) continue;
        energy.set(s.source, (energy.get(s.source) ?? 0) + s.level!);
        total += s.level!;
      }
    }
    if (total <= 0) return undefined;
    let best: number | undefined;
    let bestEnergy = 0;
    for (const [source, e] of energy) {
      if (e > bestEnergy) {
        best = source;
        bestEnergy = e;
      }
    }
    return best !== undefined && bestEnergy / total >= this.#dominance ? { source: best } : undefined;
  }

  #prune(list: Report[], now: number): void {
    const horizon = now - this.#historyMs;
    let drop = 0;
    while (drop < list.length && list[drop]!.at < horizon) drop++;
    if (drop > 0) list.splice(0, drop);
  }
}
