/**
 * The turn-taking figures of one configuration's corpus run (issue 15), from
 * the per-call results of turn-call.ts: each a row label and a printable
 * cell, plus the numbers for the JSON line.
 */
import type { CallResult } from "./turn-call.js";
import { ECHO_RETURN_LOSSES_DB, NOISE_KINDS } from "./turn-corpus.js";
import type { InputChainCost } from "./input-chain-cpu.js";
import { recordingTranscripts, transcriptWords, wordErrors } from "./stt-references.js";

export interface Figure {
  row: string;
  cell: string;
  value?: number | undefined;
}

/** Nearest-rank percentile of `values` (NaN when empty). */
export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const ms = (v: number): string => (Number.isNaN(v) ? "-" : `${Math.round(v)}`);

/** False barge-ins per 10 minutes of answer heard, with the calls cut and the exposure. */
function perTenMinutes(calls: readonly CallResult[]): { cell: string; value: number } {
  const minutes = calls.reduce((n, c) => n + c.heardMs, 0) / 60_000;
  const count = calls.reduce((n, c) => n + c.falseBargeIns, 0);
  const cut = calls.filter((c) => c.falseBargeIns > 0).length;
  const value = minutes > 0 ? (count * 10) / minutes : NaN;
  const rate = Number.isNaN(value) ? "-" : value.toFixed(1);
  return { value, cell: `${rate} (${cut} of ${calls.length} calls cut; ${minutes.toFixed(1)} min heard)` };
}

function ratio(k: number, n: number): string {
  return n === 0 ? "-" : `${k} / ${n}`;
}

export function turnFigures(results: readonly CallResult[], cpu: InputChainCost | undefined): Figure[] {
  const out: Figure[] = [];
  const echo = results.filter((r) => r.kind === "echo-only");
  for (const loss of ECHO_RETURN_LOSSES_DB) {
    const f = perTenMinutes(echo.filter((r) => r.lossDb === loss));
    out.push({ row: `false barge-ins / 10 min of echo-only answer, ERL ${loss} dB`, ...f });
  }
  out.push({ row: "false barge-ins / 10 min of echo-only answer, all ERL", ...perTenMinutes(echo) });
  // With words confirming a barge-in, a false onset is a pause that resumes: the answer is not lost.
  const echoCut = echo.filter((r) => r.answersCut > 0).length;
  out.push({
    row: "echo-only answers cancelled (a pause that resumed is not counted)",
    cell: ratio(echoCut, echo.length),
    value: echoCut,
  });
  const noisyEcho = results.filter((r) => r.kind === "noisy-echo");
  for (const kind of NOISE_KINDS) {
    const calls = noisyEcho.filter((r) => r.noise?.kind === kind);
    const snrs = [...new Set(calls.map((r) => r.noise!.snrDb))].join("/");
    out.push({
      row: `false barge-ins / 10 min of echo in ${kind} noise (SNR ${snrs} dB)`,
      ...perTenMinutes(calls),
    });
  }
  for (const [name, kind] of [
    ["interruptions", "interruption"],
    ["interruptions in noise", "noisy-interruption"],
  ] as const) {
    const all = results.filter((r) => r.kind === kind);
    const live = all.filter((r) => !r.preempted);
    const missed = live.filter((r) => !r.interrupted).length;
    const latency = live.flatMap((r) => (r.onsetToClearMs !== undefined ? [r.onsetToClearMs] : []));
    out.push({
      row: `${name} missed (no clear within 2 s of the onset)`,
      cell: ratio(missed, live.length),
      value: missed,
    });
    // With words confirming a barge-in, a clear is a pause: an interruption the words did not confirm
    // resumed the answer over the caller (a false resume).
    const resumed = live.filter((r) => r.interrupted && !r.cut).length;
    out.push({
      row: `${name} not cancelled (paused, then resumed over the caller)`,
      cell: ratio(resumed, live.length),
      value: resumed,
    });
    // Cut in the end or not, an answer resumed while the caller still spoke talked over them for a while
    // (a recognizer that gives words only at a pause, a hold shorter than the utterance).
    const overCaller = live.filter((r) => r.resumedOverCaller).length;
    out.push({
      row: `${name} resumed while the caller still spoke`,
      cell: ratio(overCaller, live.length),
      value: overCaller,
    });
    out.push({
      row: `${name} pre-empted (the answer already cut by a false barge-in)`,
      cell: ratio(all.length - live.length, all.length),
      value: all.length - live.length,
    });
    const p50 = percentile(latency, 0.5);
    const p95 = percentile(latency, 0.95);
    out.push({ row: `${name}: onset -> clear p50 / p95, ms`, cell: `${ms(p50)} / ${ms(p95)}`, value: p50 });
    const active = live.flatMap((r) =>
      r.activeOnsetToClearMs !== undefined ? [r.activeOnsetToClearMs] : [],
    );
    out.push({
      row: `${name}: P.56-active onset -> clear p50 / p95, ms`,
      cell: `${ms(percentile(active, 0.5))} / ${ms(percentile(active, 0.95))}`,
      value: percentile(active, 0.5),
    });
  }
  const backchannels = results.filter((r) => r.kind === "backchannel");
  const bcLive = backchannels.filter((r) => !r.preempted);
  const bcInterrupting = bcLive.filter((r) => r.cut).length;
  const bcPaused = bcLive.filter((r) => r.interrupted && !r.cut).length;
  out.push({
    row: "backchannels that paused the answer, which resumed",
    cell: ratio(bcPaused, bcLive.length),
    value: bcPaused,
  });
  out.push({
    row: "backchannels that interrupt (the answer cancelled)",
    cell: `${ratio(bcInterrupting, bcLive.length)}${bcLive.length < backchannels.length ? ` (${backchannels.length - bcLive.length} pre-empted)` : ""}`,
    value: bcInterrupting,
  });
  const spoken = results.filter(
    (r) => (r.kind === "interruption" || r.kind === "noisy-interruption") && !r.preempted,
  );
  const eot = spoken.flatMap((r) => (!r.premature && r.endToCommitMs !== undefined ? [r.endToCommitMs] : []));
  const eotP50 = percentile(eot, 0.5);
  out.push({
    row: "end of turn: speech end -> commit p50 / p95, ms",
    cell: `${ms(eotP50)} / ${ms(percentile(eot, 0.95))} (${eot.length} turns)`,
    value: eotP50,
  });
  // The reply to the turn: the answer the caller interrupted was cut (else what plays after is still it).
  const v2v = spoken.flatMap((r) =>
    r.cut && !r.premature && r.voiceToVoiceMs !== undefined ? [r.voiceToVoiceMs] : [],
  );
  out.push({
    row: "voice to voice: speech end -> first assistant audio on the line p50 / p95, ms",
    cell: `${ms(percentile(v2v, 0.5))} / ${ms(percentile(v2v, 0.95))} (${v2v.length} turns)`,
    value: percentile(v2v, 0.5),
  });
  const premature = spoken.filter((r) => r.premature);
  out.push({
    row: "premature cut-offs (a commit before the caller finished)",
    cell: `${ratio(premature.length, spoken.length)}; with a pause inside: ${ratio(
      premature.filter((r) => r.paused).length,
      spoken.filter((r) => r.paused).length,
    )}`,
    value: premature.length,
  });
  const words = callerWordErrors(spoken);
  out.push({
    row: "the caller's words: word errors of the turns' transcripts against the recordings' (calls with words)",
    cell: words.calls > 0 ? `${words.errors} of ${words.words} (${words.calls} calls)` : "-",
    value: words.calls > 0 ? words.errors / words.words : undefined,
  });
  out.push({
    row: "input chain CPU per call per 20 ms frame (canceller, suppressor, VAD)",
    cell: cpu
      ? `${cpu.usPerFrame.toFixed(1)} us (${((cpu.usPerFrame / 20_000) * 100).toFixed(2)}% of a core)`
      : "-",
    value: cpu?.usPerFrame,
  });
  out.push({
    row: "calls per core for the input chain alone",
    cell: cpu ? `${Math.floor(20_000 / cpu.usPerFrame)}` : "-",
    value: cpu ? Math.floor(20_000 / cpu.usPerFrame) : undefined,
  });
  return out;
}

/**
 * Word errors of what the server heard in each call (its user transcript.done texts after the caller's
 * onset, in order) against the transcripts of the recordings the caller said (recordingTranscripts),
 * over the calls whose every recording has one and that gave any words (a missed turn is counted elsewhere).
 */
function callerWordErrors(calls: readonly CallResult[]): { errors: number; words: number; calls: number } {
  const byName = recordingTranscripts();
  let errors = 0;
  let words = 0;
  let scored = 0;
  for (const call of calls) {
    const parts = call.speech?.label.split(/ \+ \d+ ms \+ /) ?? [];
    const refs = parts.map((p) => byName.get(p));
    if (parts.length === 0 || refs.some((r) => r === undefined)) continue;
    const heard = call.log.flatMap((e) =>
      e.type === "transcript.done" && e.at >= 0 && typeof e.text === "string" ? transcriptWords(e.text) : [],
    );
    if (heard.length === 0) continue;
    const ref = refs.flatMap((r) => transcriptWords(r!));
    errors += wordErrors(ref, heard);
    words += ref.length;
    scored++;
  }
  return { errors, words, calls: scored };
}
