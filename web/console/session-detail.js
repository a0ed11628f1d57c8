/**
 * The selected session: its live transcript (both sides, with speakers),
 * its events, and its latency breakdown: per turn the `latency.metrics` it
 * emitted (speech end -> first audio and barge-in -> clear on calls, turn end
 * -> transcript / first text / first audio on Talk API sessions), and the
 * provider calls its worker timed (connect, first output, total).
 */
import { Transcript } from "../transcript.js";
import { clock, h, ms } from "./dom.js";
import { counterpartOf, kindOf, sessionActions } from "./views.js";

const MAX_EVENTS = 200;
/** Latency names, in the order a turn produces them, with their labels. */
const LATENCY_LABELS = {
  speech_end_to_first_audio: "speech end → first audio",
  barge_in_to_clear: "barge-in → clear",
  turn_end_to_transcript: "turn end → transcript",
  turn_end_to_first_text: "turn end → first text",
  turn_end_to_first_audio: "turn end → first audio",
  utterance_end_to_caption: "utterance end → caption",
};
const PROVIDER_LABELS = { connect: "connect", stt: "STT", agent: "agent", tts: "TTS", realtime: "realtime" };

/** One line of text about an event for the event list. */
function describe(event) {
  const p = event.payload ?? {};
  switch (event.type) {
    case "transcript.delta":
    case "transcript.done":
      return `${p.speaker ?? p.role}: ${String(p.text ?? "").slice(0, 80)}`;
    case "output.text.delta":
    case "output.text.done":
      return String(p.text ?? "").slice(0, 80);
    case "latency.metrics":
      return `${p.name} ${ms(p.ms)}`;
    case "session.closed":
    case "output.audio.cancelled":
    case "turn.cancelled":
      return String(p.reason ?? "");
    case "session.error":
    case "tool.error":
      return `${p.code}: ${p.message ?? ""}`;
    case "session.updated":
      return p.state ? `state ${p.state}` : "";
    case "tool.call":
      return p.name;
    case "usage.metrics":
      if (p.echo) return lineText(p.echo);
      if (p.preparedAnswers) return preparedText(p.preparedAnswers);
      return `tokens in ${p.inputTokens ?? 0} / out ${p.outputTokens ?? 0}`;
    case "output.audio.resumed":
      return String(p.reason ?? "");
    case "output.audio.done":
      return ms(p.durationMs);
    default:
      return "";
  }
}

/**
 * A call's echo as its leg's guard reported it at the end (usage.metrics `echo`): the line's echo return
 * loss (a speakerphone returns the answer 3-10 dB down, a handset 20 and more), and of the frames heard
 * while the answer played, how many were its echo and how many the caller talking over it.
 */
export function lineText(echo) {
  const erl =
    typeof echo.echoReturnLossDb === "number" ? `ERL ${echo.echoReturnLossDb} dB` : "ERL not measured";
  return `${erl} · ${echo.suppressedFrames} echo / ${echo.doubleTalkFrames} double-talk of ${echo.frames} frames`;
}

/** Answers the agent was asked for ahead of the end of turn: the discarded ones cost tokens nobody heard. */
export function preparedText(p) {
  return `answers prepared ${p.prepared}: ${p.used} used, ${p.discarded} discarded`;
}

export class SessionDetail {
  constructor(els) {
    this.els = els;
    this.sessionId = undefined;
    this.summary = undefined;
    this.events = [];
    this.latency = [];
    this.endedReason = undefined;
    /** The call's line (its echo report) and its answers resumed by why: a bad line shows here. */
    this.line = undefined;
    this.resumed = { no_words: 0, backchannel: 0 };
    this.transcript = new Transcript(els.transcript, {
      who: (role, env) => {
        if (role === "assistant") return this.summary?.surface === "meeting" ? "Bot" : "Assistant";
        const speaker = env.payload?.speaker;
        if (typeof speaker === "string" && speaker) return speaker;
        return this.summary?.surface === "phone" ? "Caller" : "User";
      },
      // Scroll the transcript's own box, never the page.
      reveal: () => {
        const list = this.els.transcript;
        list.scrollTop = list.scrollHeight;
      },
    });
  }

  clear() {
    this.sessionId = undefined;
    this.summary = undefined;
    this.els.root.hidden = true;
    this.els.empty.hidden = false;
    this.els.title.textContent = "";
  }

  show(sessionId, summary) {
    this.sessionId = sessionId;
    this.summary = summary;
    this.events = [];
    this.latency = [];
    this.endedReason = undefined;
    this.line = undefined;
    this.resumed = { no_words: 0, backchannel: 0 };
    this.transcript.clear();
    this.els.events.replaceChildren();
    this.els.root.hidden = false;
    this.els.empty.hidden = true;
    this.els.title.textContent = sessionId;
    this.#renderHead();
    this.#renderLatency();
  }

  update(summary) {
    if (summary.sessionId !== this.sessionId) return;
    this.summary = summary;
    this.#renderHead();
    this.#renderLatency();
  }

  apply(event) {
    if (event.sessionId !== this.sessionId) return;
    this.transcript.apply(event);
    if (event.type === "latency.metrics") {
      this.latency.push({ turnId: event.turnId, name: event.payload.name, ms: event.payload.ms });
      this.#renderLatency();
    }
    if (event.type === "usage.metrics" && event.payload?.echo) {
      this.line = event.payload.echo;
      this.#renderHead();
    }
    if (event.type === "output.audio.resumed" && event.payload?.reason in this.resumed) {
      this.resumed[event.payload.reason] += 1;
      this.#renderHead();
    }
    this.events.push({ seq: event.seq, type: event.type, at: event.timestamp });
    if (this.events.length > MAX_EVENTS) this.events.shift();
    const list = this.els.events;
    const stick = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    list.append(
      h(
        "li",
        { class: `event ev-${event.type.split(".")[0]}`, dataset: { type: event.type } },
        h("span", { class: "mono muted" }, String(event.seq)),
        h("span", { class: "mono muted" }, clock(Date.parse(event.timestamp))),
        h("span", { class: "type" }, event.type),
        h("span", { class: "what" }, describe(event)),
      ),
    );
    while (list.childElementCount > MAX_EVENTS) list.firstElementChild.remove();
    if (stick) list.scrollTop = list.scrollHeight;
  }

  ended(reason) {
    this.endedReason = reason;
    this.#renderHead();
  }

  snapshot() {
    return {
      sessionId: this.sessionId,
      ended: this.endedReason,
      transcript: this.transcript.snapshot(),
      events: this.events.map((e) => e.type),
      latency: this.latency,
      line: this.line,
      resumed: this.resumed,
    };
  }

  #renderHead() {
    const s = this.summary;
    const facts = [];
    const fact = (k, v) => h("div", { class: "fact" }, h("span", { class: "muted small" }, k), h("b", {}, v));
    if (s) {
      const { kind, label } = kindOf(s);
      const who = counterpartOf(s);
      facts.push(
        fact(kind, label),
        fact("counterpart", `${who.main} ${who.sub}`.trim()),
        fact("mode", `${s.mode} · ${s.brain}`),
        fact("provider", s.provider ?? "local"),
        fact("worker", s.workerId),
        fact("state", this.endedReason ? "ended" : `${s.state} · ${s.activity}`),
      );
    }
    const { no_words: noWords, backchannel } = this.resumed;
    if (noWords + backchannel > 0)
      facts.push(fact("answers resumed", `${noWords} no words · ${backchannel} backchannel`));
    if (this.line) facts.push(fact("line", lineText(this.line)));
    if (this.endedReason)
      facts.push(
        h(
          "div",
          { class: "fact ended" },
          h("span", { class: "muted small" }, "ended"),
          h("b", {}, this.endedReason),
        ),
      );
    this.els.facts.replaceChildren(...facts);
    this.els.actions.replaceChildren(...(s && !this.endedReason ? sessionActions(s, this.els.act) : []));
  }

  #renderLatency() {
    const rows = [];
    const turns = new Map();
    for (const m of this.latency) {
      const key = m.turnId ?? "-";
      if (!turns.has(key)) turns.set(key, []);
      turns.get(key).push(m);
    }
    const recent = [...turns.entries()].slice(-4);
    const max = Math.max(
      1,
      ...this.latency.map((m) => m.ms),
      ...(this.summary?.providers ?? []).map((p) => p.totalMs ?? 0),
    );
    const bar = (label, value, kind) =>
      h(
        "div",
        { class: `lat ${kind}` },
        h("span", { class: "lat-label" }, label),
        h(
          "span",
          { class: "lat-bar" },
          h("i", { style: { width: `${Math.max(2, (value / max) * 100).toFixed(1)}%` } }),
        ),
        h("span", { class: "lat-value mono" }, ms(value)),
      );
    // A transcription session (captions) answers no turn: its figure is each caption's latency.
    const captions = this.summary?.mode === "transcription";
    recent.forEach(([turnId, metrics], i) => {
      const label = `${captions ? "caption" : "turn"} ${turns.size - recent.length + i + 1}`;
      rows.push(
        h(
          "div",
          { class: "lat-turn muted small" },
          label,
          h("span", { class: "mono" }, turnId === "-" ? "" : turnId.slice(0, 8)),
        ),
      );
      for (const m of metrics) rows.push(bar(LATENCY_LABELS[m.name] ?? m.name, m.ms, "turn"));
    });
    const providers = (this.summary?.providers ?? []).slice(-5);
    if (providers.length) rows.push(h("div", { class: "lat-turn muted small" }, "provider calls"));
    for (const p of providers) {
      const label = `${PROVIDER_LABELS[p.kind] ?? p.kind} · ${p.provider}`;
      if (p.kind === "connect") rows.push(bar(label, p.totalMs ?? 0, "provider"));
      else {
        if (p.firstMs !== undefined) rows.push(bar(`${label} first`, p.firstMs, "provider first"));
        if (p.totalMs !== undefined) rows.push(bar(`${label} total`, p.totalMs, "provider"));
        else if (p.firstMs === undefined) rows.push(bar(`${label} (running)`, 0, "provider"));
      }
    }
    if (!rows.length)
      rows.push(
        h(
          "p",
          { class: "empty" },
          captions
            ? "No figures yet: they come with the first caption."
            : "No figures yet: they come with the first answered turn.",
        ),
      );
    this.els.latency.replaceChildren(...rows);
  }
}
