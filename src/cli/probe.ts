import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BotStatus, ScreenVisit } from "../meetings/index.js";

export interface ProbeOptions {
  /** The live meeting's URL (Google Meet, Zoom, Teams). */
  url: string;
  /** A config file (its meetings.* apply; the server part is replaced: loopback, a free port, no test room). */
  configPath?: string | undefined;
  /** Where the report goes. Default: talkgate-probe-<time>.html in the system's temporary directory. */
  out?: string | undefined;
  /** The name the bot joins with. Default "talkgate probe". */
  name?: string | undefined;
  /** How long to stay once in the call, s. Default 15. */
  staySeconds?: number | undefined;
  /** Give up on the join after this long (waiting room included), s. Default 300. */
  maxSeconds?: number | undefined;
  /** Development: a headless browser (the live platforms may refuse it). */
  headless?: boolean | undefined;
}

export interface ProbeIo {
  stdout(line: string): void;
  stderr(line: string): void;
}

const escape = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/**
 * `talkgate meetings probe <meeting-url>`: joins a real meeting as a
 * throwaway bot (a private in-process server on loopback, transcribe mode),
 * saves every screen it passes (a screenshot, the buttons, labels, headings
 * and dialogs it saw, the screen and phase the driver decided and why) and
 * writes them into one HTML report, stays `staySeconds` once in the call,
 * then leaves. Exit 0 when the bot got into the call, 1 when not (the
 * report says where it stopped), 2 for bad arguments.
 */
export async function runProbe(options: ProbeOptions, io: ProbeIo): Promise<number> {
  const { loadConfig } = await import("../config/load-config.js");
  const { createApp } = await import("../app.js");
  const dataDir = mkdtempSync(join(tmpdir(), "talkgate-probe-"));
  const loaded = loadConfig(options.configPath ? { path: options.configPath } : {});
  // A private server for the probe only: loopback, a free port, no tokens (loopback callers only), its own data.
  Object.assign(loaded.config.server, { host: "127.0.0.1", port: 0, workers: 1 });
  Object.assign(loaded.config, { dataDir });
  loaded.config.auth.tokens = [];
  loaded.config.log.level = "warn";
  const meetings = loaded.config.meetings;
  Object.assign(meetings, {
    recordScreens: "all",
    testRoom: { ...meetings.testRoom, enabled: false },
    ...(options.headless ? { browser: "headless" } : {}),
    // The probe watches; it does not end itself on the meeting's silence or solitude.
    aloneTimeoutMs: 600_000,
    silenceTimeoutMs: 0,
    waitingRoomTimeoutMs: (options.maxSeconds ?? 300) * 1000,
    joinTimeoutMs: Math.min(meetings.joinTimeoutMs, (options.maxSeconds ?? 300) * 1000),
  });
  const app = await createApp(loaded);
  const started = Date.now();
  let status: BotStatus | undefined;
  try {
    const { port } = await app.listen({ port: 0 });
    const base = `http://127.0.0.1:${port}`;
    const res = await fetch(`${base}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        meetingUrl: options.url,
        botName: options.name ?? "talkgate probe",
        mode: "transcribe",
      }),
    });
    const created = (await res.json()) as BotStatus & { error?: { message: string } };
    if (res.status !== 201) {
      io.stderr(`talkgate meetings probe: ${created.error?.message ?? `HTTP ${res.status}`}`);
      return 2;
    }
    io.stdout(`probe bot ${created.id} joining ${options.url}`);
    const read = async (): Promise<BotStatus> =>
      (await (await fetch(`${base}/meetings/bots/${created.id}`)).json()) as BotStatus;
    let shown = 0;
    let inCallAt: number | undefined;
    const deadline = started + (options.maxSeconds ?? 300) * 1000;
    for (;;) {
      status = await read();
      for (const s of (status.screens ?? []).slice(shown))
        io.stdout(`  ${s.at}  ${s.screen} (${s.phase}): ${s.reason}`);
      shown = status.screens?.length ?? 0;
      if (status.state === "ended" || status.state === "fatal") break;
      if (status.state === "in_call") inCallAt ??= Date.now();
      const stayedEnough =
        inCallAt !== undefined && Date.now() - inCallAt >= (options.staySeconds ?? 15) * 1000;
      if (stayedEnough || Date.now() > deadline) {
        await fetch(`${base}/meetings/bots/${created.id}`, { method: "DELETE" });
        for (;;) {
          status = await read();
          if (status.state === "ended" || status.state === "fatal") break;
          await new Promise((r) => setTimeout(r, 250));
        }
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const out =
      options.out ?? join(tmpdir(), `talkgate-probe-${new Date().toISOString().replace(/[:.]/g, "-")}.html`);
    writeFileSync(out, report(options.url, status));
    const joined = status.timings.joinedAt !== undefined;
    io.stdout(
      `${joined ? "got into the call" : "did not get into the call"}; ended ${status.state} / ${status.subCode ?? "-"}${status.message ? `: ${status.message}` : ""}`,
    );
    io.stdout(`report: ${out}`);
    return joined ? 0 : 1;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One self-contained HTML page: each screen's picture, what was on it, and what the driver decided. */
function report(url: string, status: BotStatus): string {
  const screens = (status.screens ?? []).map((s: ScreenVisit, i) => {
    const png = s.screenshot ? readSafe(s.screenshot, "base64") : undefined;
    const seen = s.description
      ? (JSON.parse(readSafe(s.description, "utf8") ?? "{}") as Record<string, unknown>)
      : {};
    const list = (name: string): string => {
      const items = Array.isArray(seen[name]) ? (seen[name] as string[]) : [];
      return items.length === 0
        ? ""
        : `<h4>${name}</h4><ul>${items.map((t) => `<li>${escape(String(t))}</li>`).join("")}</ul>`;
    };
    return `<section><h3>${i + 1}. ${escape(s.screen)} <small>(${escape(s.phase)}) ${escape(s.at)}</small></h3>
<p>decided: <b>${escape(s.screen)}</b>, because: ${escape(s.reason)}</p>
<p><small>${escape(String(seen["url"] ?? ""))} ${escape(String(seen["title"] ?? ""))}</small></p>
${png ? `<img alt="screen ${i + 1}" src="data:image/png;base64,${png}">` : "<p>(no screenshot)</p>"}
${list("buttons")}${list("labels")}${list("headings")}${list("dialogs")}</section>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>talkgate meetings probe</title>
<style>body{font:14px system-ui;margin:2em}img{max-width:100%;border:1px solid #999}section{border-top:1px solid #ccc;margin-top:2em}</style></head>
<body><h1>talkgate meetings probe</h1>
<p>meeting: ${escape(url)}<br>platform: ${escape(status.platform)}<br>
outcome: <b>${escape(status.state)} / ${escape(status.subCode ?? "-")}</b> ${escape(status.message ?? "")}<br>
joined: ${escape(status.timings.joinedAt ?? "no")}<br>
states: ${escape(status.history.map((h) => h.state + (h.subCode ? `(${h.subCode})` : "")).join(" → "))}</p>
${screens.join("\n")}
</body></html>`;
}

function readSafe(path: string, encoding: "base64" | "utf8"): string | undefined {
  try {
    return readFileSync(path, encoding);
  } catch {
    return undefined;
  }
}
