import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProbe } from "../../src/cli/probe.js";
import { startMeetSimulator, type MeetSimulator } from "../support/meet-simulator.js";

/**
 * `talkgate meetings probe` against the Google Meet simulator (a live
 * meeting cannot be reached from here): the throwaway bot joins, every screen
 * it passed is in one HTML report with its picture, the buttons and labels
 * seen and the screen decided and why; it leaves. Chromium processes: 1.
 */
describe("talkgate meetings probe", () => {
  let sim: MeetSimulator;
  let dir: string;

  beforeAll(async () => {
    sim = await startMeetSimulator();
    dir = mkdtempSync(join(tmpdir(), "talkgate-probe-test-"));
  });

  afterAll(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("joins, reports every screen it passed with its picture and what it saw, and leaves", async () => {
    const meeting = sim.meeting("probe-meet", { consent: true });
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ meetings: { googleMeet: { testOrigins: [sim.origin] } } }));
    // The host lets the bot in two seconds after it asked (the bot reads the page every 500 ms).
    let askedAt: number | undefined;
    const host = setInterval(() => {
      if (meeting.state !== "lobby") return;
      askedAt ??= Date.now();
      if (Date.now() - askedAt > 2000) meeting.admit();
    }, 200);
    const out = join(dir, "report.html");
    const lines: string[] = [];
    try {
      const code = await runProbe(
        { url: `${sim.origin}/${meeting.code}`, configPath: config, out, staySeconds: 1, maxSeconds: 90 },
        { stdout: (l) => lines.push(l), stderr: (l) => lines.push(`ERR ${l}`) },
      );
      expect(code, lines.join("\n")).toBe(0);
    } finally {
      clearInterval(host);
    }
    // It left: the meeting saw it go.
    expect(meeting.state).toBe("ended");
    const html = readFileSync(out, "utf8");
    for (const screen of ["prejoin", "lobby", "consent", "in_call"])
      expect(html).toContain(`. ${screen} <small>`);
    expect(html).toContain("because: button: Ask to join");
    expect(html.match(/data:image\/png;base64,/g)?.length).toBeGreaterThanOrEqual(4);
    // What the page showed: its buttons and labels.
    expect(html).toContain("<li>Ask to join");
    expect(html).toContain("Turn off microphone (ctrl + d)");
    expect(html).toContain("outcome: <b>ended / requested</b>");
    expect(lines.some((l) => l.startsWith("report: "))).toBe(true);
  }, 120_000);
});
