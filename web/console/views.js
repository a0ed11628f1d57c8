/** The console's panels, rebuilt from plain data on every poll (a few dozen rows at most). */
import { clock, confirmButton, elapsed, h } from "./dom.js";

/** Badge colours of session states: live ones green, transitions amber. */
const STATE_TONE = { active: "ok", in_call: "ok", joining: "warn", leaving: "warn", closing: "warn" };

/** What a session is to an operator: a phone call, a meeting bot or a Talk API client. */
export function kindOf(s) {
  if (s.surface === "phone") return { kind: "call", label: s.carrier ?? "phone" };
  if (s.surface === "meeting") return { kind: "bot", label: s.platform ?? "meeting" };
  return { kind: "client", label: s.surface };
}

export function counterpartOf(s) {
  const c = s.counterpart ?? {};
  if (s.surface === "phone") {
    const arrow = c.direction === "outbound" ? "→" : "←";
    return {
      main: c.direction === "outbound" ? (c.to ?? "?") : (c.from ?? "?"),
      sub: `${arrow} ${c.direction === "outbound" ? (c.from ?? "") : (c.to ?? "")}`,
    };
  }
  if (s.surface === "meeting") {
    // A bot by the name it joined with; its id beside it (what the REST API and logs use).
    const where = c.meetingUrl ?? c.role ?? "";
    if (c.botName) return { main: c.botName, sub: [c.botId, where].filter(Boolean).join(" · ") };
    return { main: c.botId ?? "bot", sub: where };
  }
  return { main: c.connection ?? s.surface, sub: s.transport };
}

export function renderSummary(el, state) {
  const calls = state.sessions.filter((s) => s.surface === "phone").length;
  const bots = state.sessions.filter((s) => s.surface === "meeting").length;
  const draining = state.workers.filter((w) => w.draining).length;
  const stat = (value, label, extra = "") => h("span", { class: `stat ${extra}` }, h("b", {}, value), label);
  const stats = [
    stat(state.workers.length, state.workers.length === 1 ? "worker" : "workers"),
    draining ? stat(draining, "draining", "warn") : null,
    stat(calls, calls === 1 ? "call" : "calls"),
    stat(bots, bots === 1 ? "bot" : "bots"),
    state.unreachable.length ? stat(state.unreachable.length, "unreachable", "bad") : null,
  ];
  el.replaceChildren(...stats.filter(Boolean));
}

export function renderWorkers(list, count, workers, drain) {
  count.textContent = String(workers.length);
  list.replaceChildren(
    ...workers.map((w) => {
      const share = w.maxSessions > 0 ? Math.min(1, w.sessions / w.maxSessions) : 0;
      return h(
        "li",
        { class: `worker ${w.draining ? "draining" : ""}`, dataset: { worker: w.id } },
        h(
          "div",
          { class: "worker-head" },
          h("span", { class: "mono worker-id" }, w.id),
          h("span", { class: `badge ${w.draining ? "warn" : "ok"}` }, w.draining ? "draining" : w.state),
        ),
        h("div", { class: "roles" }, ...w.roles.map((r) => h("span", { class: "chip" }, r))),
        h(
          "div",
          { class: "load", title: `${w.sessions} of ${w.maxSessions} sessions` },
          h("div", { class: "bar" }, h("i", { style: { width: `${(share * 100).toFixed(1)}%` } })),
          h("span", { class: "muted" }, `${w.sessions}/${w.maxSessions}`),
        ),
        h(
          "dl",
          { class: "kv" },
          h("dt", {}, "CPU"),
          h("dd", {}, `${Math.round(w.cpu * 100)}%`),
          h("dt", {}, "Jobs"),
          h("dd", {}, String(w.jobs)),
          h("dt", {}, "Up"),
          h("dd", { dataset: { since: String(w.startedAt) } }, elapsed(w.startedAt)),
        ),
        w.draining
          ? h("p", { class: "muted small" }, "Refuses new sessions and jobs; restart it when empty.")
          : confirmButton("Drain", `drain:${w.id}`, () => drain(w.id), {
              class: "danger small",
              "data-action": "drain",
            }),
      );
    }),
  );
}

export function sessionActions(s, act) {
  const { kind } = kindOf(s);
  const actions = [];
  if (kind === "bot" && s.counterpart?.botId) {
    actions.push(
      confirmButton("Remove bot", `removeBot:${s.sessionId}`, () => act("removeBot", s), {
        "data-action": "remove-bot",
      }),
    );
  } else {
    actions.push(
      confirmButton(kind === "call" ? "Hang up" : "Close", `hangUp:${s.sessionId}`, () => act("hangUp", s), {
        "data-action": "hang-up",
      }),
    );
  }
  if (s.activity === "speaking")
    actions.unshift(
      h(
        "button",
        {
          type: "button",
          class: "ghost",
          "data-action": "cancel-output",
          onclick: (e) => (e.stopPropagation(), act("cancelOutput", s)),
        },
        "Cancel output",
      ),
    );
  return actions;
}

export function renderSessions(body, count, empty, sessions, { selected, select, act }) {
  count.textContent = String(sessions.length);
  empty.hidden = sessions.length > 0;
  body.replaceChildren(
    ...sessions.map((s) => {
      const { kind, label } = kindOf(s);
      const who = counterpartOf(s);
      return h(
        "tr",
        {
          class: `row ${s.sessionId === selected ? "selected" : ""}`,
          dataset: { session: s.sessionId, kind },
          tabindex: "0",
          onclick: () => select(s.sessionId),
          onkeydown: (e) => e.key === "Enter" && select(s.sessionId),
        },
        h("td", {}, h("span", { class: `kind ${kind}` }, kind), h("span", { class: "muted small" }, label)),
        h("td", {}, h("div", { class: "mono" }, who.main), h("div", { class: "muted small" }, who.sub)),
        h("td", {}, s.mode),
        h(
          "td",
          {},
          h("span", { class: `activity ${s.activity}`, title: s.activity }),
          h("span", { class: `badge ${STATE_TONE[s.state] ?? ""}` }, s.state),
        ),
        h("td", { class: "mono small" }, s.workerId),
        h("td", { class: "num mono", dataset: { since: String(s.startedAt) } }, elapsed(s.startedAt)),
        h("td", { class: "row-actions" }, ...sessionActions(s, act)),
      );
    }),
  );
}

export function renderErrors(list, count, empty, errors, select) {
  count.textContent = errors.length ? String(errors.length) : "";
  empty.hidden = errors.length > 0;
  list.replaceChildren(
    ...errors
      .slice(0, 30)
      .map((e) =>
        h(
          "li",
          { class: "error-item", onclick: () => select(e.sessionId) },
          h("span", { class: "mono muted small" }, clock(e.at)),
          h("span", { class: "badge bad" }, e.code),
          h("span", { class: "message" }, e.message),
          h("span", { class: "muted small" }, `${e.surface} · ${e.source} · ${e.workerId}`),
        ),
      ),
  );
}

const seconds = (v) => (v >= 60 ? `${(v / 60).toFixed(1)} min` : `${v.toFixed(1)} s`);

export function renderUsage(body, totals, records) {
  const sum = (f) => records.reduce((a, r) => a + (Number(r[f]) || 0), 0);
  const cost = records.reduce((a, r) => a + (r.cost?.total ?? 0), 0);
  const currency = records[0]?.cost?.currency ?? "";
  const total = (value, label) => h("div", { class: "total" }, h("b", {}, value), h("span", {}, label));
  totals.replaceChildren(
    total(String(records.length), "sessions"),
    total(seconds(sum("durationSeconds")), "talk time"),
    total(seconds(sum("audioInSeconds") + sum("audioOutSeconds")), "audio"),
    total(String(sum("inputTokens") + sum("outputTokens")), "tokens"),
    total(`${cost.toFixed(4)} ${currency}`.trim(), "estimated cost"),
  );
  body.replaceChildren(
    ...records
      .slice(-12)
      .reverse()
      .map((r) =>
        h(
          "tr",
          { dataset: { session: r.sessionId } },
          h("td", { class: "mono small" }, clock(Date.parse(r.endedAt))),
          h(
            "td",
            {},
            h(
              "span",
              { class: "small" },
              `${r.surface}${r.carrier ? ` · ${r.carrier}` : ""}${r.platform ? ` · ${r.platform}` : ""}`,
            ),
            h("div", { class: "mono muted small" }, r.sessionId.slice(0, 13)),
            // A bad line at a glance: its echo return loss and the answers its echo (or noise) held.
            r.echo || r.resumed?.noWords || r.preparedAnswers?.discarded
              ? h(
                  "div",
                  { class: "muted small", dataset: { line: r.sessionId } },
                  [
                    typeof r.echo?.echoReturnLossDb === "number" ? `ERL ${r.echo.echoReturnLossDb} dB` : "",
                    r.echo ? `${r.echo.doubleTalkFrames} double-talk frames` : "",
                    r.resumed?.noWords ? `${r.resumed.noWords} resumed` : "",
                    r.preparedAnswers?.discarded
                      ? `${r.preparedAnswers.discarded} prepared answers discarded`
                      : "",
                  ]
                    .filter(Boolean)
                    .join(" · "),
                )
              : undefined,
          ),
          h("td", { class: "num" }, seconds(r.durationSeconds)),
          h("td", { class: "num" }, `${r.audioInSeconds.toFixed(1)} / ${r.audioOutSeconds.toFixed(1)} s`),
          h("td", { class: "num" }, String(r.inputTokens + r.outputTokens)),
          h("td", { class: "num" }, `${r.cost.total.toFixed(4)}`),
        ),
      ),
  );
}

/** Meeting bots' join attempts and outcomes per platform (`admin.meetings.joins`): the join success rate. */
export function renderJoins(body, empty, platforms) {
  empty.hidden = platforms.length > 0;
  body.replaceChildren(
    ...platforms.map((p) =>
      h(
        "tr",
        {},
        h("td", {}, p.platform),
        h("td", { class: "num" }, String(p.attempts)),
        h("td", { class: "num" }, String(p.joined)),
        h("td", { class: "num" }, p.attempts ? `${Math.round((100 * p.joined) / p.attempts)} %` : "—"),
        h(
          "td",
          { class: "small" },
          p.outcomes
            .map((o) => `${o.state} / ${o.subCode}${o.joined ? "" : " (not in)"}: ${o.count}`)
            .join(", ") || "—",
        ),
      ),
    ),
  );
}
