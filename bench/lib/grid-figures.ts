/**
 * The talker-to-echo grid's figures (issue 40), for the offline chain
 * (onset-latency.bench.ts --grid) and the real leg (turn-taking.bench.ts
 * --grid) alike: per echo return loss, self-interruptions per 10 minutes of
 * echo-only answer; per cell (ERL x TER), onset -> clear p50 / p95, missed
 * and pre-empted interruptions. Every configuration of the run in each cell,
 * side by side (the first one is the change, the others its baselines).
 */
import { percentile } from "./turn-figures.js";

/** One call's outcome under one configuration. */
export interface GridOutcome {
  kind: string;
  lossDb: number;
  terDb?: number | undefined;
  /** Onsets (offline) or clears (real time) before the caller spoke: the answer interrupted by its own echo. */
  selfInterruptions: number;
  /** Answer heard while the caller was silent, minutes (the exposure of selfInterruptions). */
  echoMinutes: number;
  /** The answer was already cut when the caller began (real time), or an onset came before it (offline). */
  preempted: boolean;
  /** No clear (no gate onset offline) within 2 s of the caller's onset. */
  missed: boolean;
  /** Corpus onset -> clear (offline: -> the gate's onset), ms. */
  latencyMs?: number | undefined;
  /** The first P.56-active 10 ms -> clear, ms. */
  activeLatencyMs?: number | undefined;
  /**
   * Offline only: the same gate on the caller's track alone (no echo, no guard), the first P.56-active 10 ms
   * -> its onset, ms; undefined where it heard none (`aloneHeard` false). The floor under activeLatencyMs: what
   * no echo guard can take off.
   */
  aloneActiveLatencyMs?: number | undefined;
  aloneHeard?: boolean | undefined;
  /** Real time only: a turn committed before the caller finished (cut off mid-utterance). */
  premature?: boolean | undefined;
  /** Real time only: end of speech -> the commit after it, ms. */
  endToCommitMs?: number | undefined;
  /** Real time only: end of speech -> the first assistant audio on the line after it, ms. */
  voiceToVoiceMs?: number | undefined;
}

const fmt = (v: number): string => (Number.isNaN(v) ? "-" : String(Math.round(v)));

/** Markdown tables of the grid, one configuration per cell part ("a · b": the first configuration, then the next). */
export function gridTables(
  byConfig: ReadonlyMap<string, readonly GridOutcome[]>,
  erls: readonly number[],
  ters: readonly number[],
  callerLevelDb: (erl: number, ter: number) => number,
): string[] {
  const ids = [...byConfig.keys()];
  const out: string[] = [];
  const joined = (
    cell: (calls: readonly GridOutcome[]) => string,
    pick: (o: GridOutcome) => boolean,
    configs: readonly string[] = ids,
  ): string => configs.map((id) => cell(byConfig.get(id)!.filter(pick))).join(" · ");
  out.push(`Configurations in each cell, in this order: ${ids.join(" · ")}`, "");
  out.push(
    `| ERL | self-interruptions / 10 min of echo-only answer (calls with one, of; minutes) |`,
    "|---|---|",
  );
  for (const erl of erls)
    out.push(
      `| ${erl} dB | ${joined(
        (calls) => {
          const minutes = calls.reduce((n, c) => n + c.echoMinutes, 0);
          const count = calls.reduce((n, c) => n + c.selfInterruptions, 0);
          const cut = calls.filter((c) => c.selfInterruptions > 0).length;
          return `${minutes > 0 ? ((count * 10) / minutes).toFixed(1) : "-"} (${cut} of ${calls.length}; ${minutes.toFixed(1)} min)`;
        },
        (o) => o.kind === "echo-only" && o.lossDb === erl,
      )} |`,
    );
  out.push("");
  const header = `| ERL \\ TER | ${ters.map((t) => `${t > 0 ? "+" : ""}${t} dB`).join(" | ")} |`;
  const rule = `|---|${ters.map(() => "---").join("|")}|`;
  const grid = (
    title: string,
    cell: (calls: readonly GridOutcome[]) => string,
    configs: readonly string[] = ids,
  ): void => {
    out.push(`${title}`, "", header, rule);
    for (const erl of erls)
      out.push(
        `| ${erl} dB | ${ters
          .map((ter) =>
            joined(cell, (o) => o.kind !== "echo-only" && o.lossDb === erl && o.terDb === ter, configs),
          )
          .join(" | ")} |`,
      );
    out.push("");
  };
  const latency = (pick: (o: GridOutcome) => number | undefined) => (calls: readonly GridOutcome[]) => {
    const v = calls.filter((c) => !c.preempted).flatMap((c) => (pick(c) !== undefined ? [pick(c)!] : []));
    return `${fmt(percentile(v, 0.5))}/${fmt(percentile(v, 0.95))}`;
  };
  grid(
    "P.56-active onset -> clear p50/p95, ms (goal 200/300 where TER >= -6 dB)",
    latency((o) => o.activeLatencyMs),
  );
  // The gate alone does not depend on the configuration: once, from the first's calls.
  if (byConfig.get(ids[0]!)!.some((o) => o.aloneHeard !== undefined))
    grid(
      "the same gate on the caller's track alone (no echo, no guard): P.56-active onset -> onset p50/p95, ms; missed, of the cell's calls",
      (calls) => {
        const v = calls.flatMap((c) =>
          c.aloneActiveLatencyMs !== undefined ? [c.aloneActiveLatencyMs] : [],
        );
        return `${fmt(percentile(v, 0.5))}/${fmt(percentile(v, 0.95))}; ${calls.filter((c) => c.aloneHeard === false).length}/${calls.length}`;
      },
      ids.slice(0, 1),
    );
  grid(
    "corpus onset -> clear p50/p95, ms",
    latency((o) => o.latencyMs),
  );
  grid(
    "interruptions missed + pre-empted by a self-interruption, of the cell's calls (goal 0 + 0)",
    (calls) => {
      const live = calls.filter((c) => !c.preempted);
      return `${live.filter((c) => c.missed).length}+${calls.length - live.length}/${calls.length}`;
    },
  );
  if (ids.some((id) => byConfig.get(id)!.some((o) => o.premature !== undefined)))
    grid(
      "end of turn: premature cut-offs, of the cell's calls / speech end -> commit p50 / voice to voice p50, ms (as turn-figures.ts counts them: calls not pre-empted; times of turns not cut short)",
      (calls) => {
        const spoken = calls.filter((c) => !c.preempted);
        const whole = spoken.filter((c) => !c.premature);
        const p50 = (pick: (o: GridOutcome) => number | undefined): string =>
          fmt(
            percentile(
              whole.flatMap((c) => (pick(c) !== undefined ? [pick(c)!] : [])),
              0.5,
            ),
          );
        return `${spoken.length - whole.length}/${spoken.length} ${p50((c) => c.endToCommitMs)} ${p50((c) => c.voiceToVoiceMs)}`;
      },
    );
  out.push(`| ERL \\ TER | ${ters.map((t) => `${t > 0 ? "+" : ""}${t} dB`).join(" | ")} |`, rule);
  for (const erl of erls)
    out.push(
      `| caller's active level at ERL ${erl} dB, dBFS | ${ters.map((ter) => fmt(callerLevelDb(erl, ter))).join(" | ")} |`,
    );
  return out;
}

/** Totals over the cells where TER >= `minTer` (the goal's cells): p50 / p95, missed, pre-empted. */
export function gridSummary(outcomes: readonly GridOutcome[], minTer: number): string {
  const calls = outcomes.filter((o) => o.kind !== "echo-only" && (o.terDb ?? 0) >= minTer);
  const live = calls.filter((c) => !c.preempted);
  const v = live.flatMap((c) => (c.activeLatencyMs !== undefined ? [c.activeLatencyMs] : []));
  const echo = outcomes.filter((o) => o.kind === "echo-only");
  const minutes = echo.reduce((n, c) => n + c.echoMinutes, 0);
  const self = echo.reduce((n, c) => n + c.selfInterruptions, 0);
  return (
    `TER >= ${minTer} dB: P.56 onset -> clear p50/p95 ${fmt(percentile(v, 0.5))}/${fmt(percentile(v, 0.95))} ms over ${v.length}, ` +
    `missed ${live.filter((c) => c.missed).length}, pre-empted ${calls.length - live.length} of ${calls.length}; ` +
    `all TER: missed ${outcomes.filter((o) => o.kind !== "echo-only" && !o.preempted && o.missed).length}, ` +
    `pre-empted ${outcomes.filter((o) => o.kind !== "echo-only" && o.preempted).length}; ` +
    `echo-only: ${self} self-interruptions in ${minutes.toFixed(1)} min` +
    aloneSummary(live)
  );
}

/**
 * Offline, for the goal's cells: the gate alone on the callers' tracks (the floor no echo guard can take off), and
 * what the echo path adds over it per call; "" in real time.
 */
function aloneSummary(calls: readonly GridOutcome[]): string {
  if (!calls.some((c) => c.aloneHeard !== undefined)) return "";
  const alone = calls.flatMap((c) => (c.aloneActiveLatencyMs !== undefined ? [c.aloneActiveLatencyMs] : []));
  const cost = calls.flatMap((c) =>
    c.activeLatencyMs !== undefined && c.aloneActiveLatencyMs !== undefined
      ? [c.activeLatencyMs - c.aloneActiveLatencyMs]
      : [],
  );
  return (
    `; the gate alone on the callers' tracks (TER >= the same) p50/p95 ${fmt(percentile(alone, 0.5))}/${fmt(percentile(alone, 0.95))} ms, ` +
    `missed ${calls.filter((c) => c.aloneHeard === false).length}; the echo path's cost over it where both heard ` +
    `p50/p95 ${fmt(percentile(cost, 0.5))}/${fmt(percentile(cost, 0.95))} ms, ${cost.filter((ms) => ms >= 100).length} calls 100 ms or more`
  );
}
