/**
 * Client protocol faults are the client's, not the server's: on /talk an
 * invalid-UTF-8 or oversized frame closes that socket with 1007 / 1009, the
 * close code actually sent is what talkgate_ws_closed_total counts, and the
 * log gets a warning with the reason, rate-limited per reason per window, not
 * an error line with a stack per frame. The media stream's frame rejections
 * go through the same windowed limiter.
 */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type GatewayHarness, startGateway, TOKENS } from "../support/gateway-harness.js";
import { startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

const INVALID_UTF8 = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);

let h: GatewayHarness | undefined;
let t: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await t?.close();
  t = undefined;
});

/** Opens /talk, sends one frame as text, resolves with the close code the client received. */
async function sendOnce(url: string, frame: Buffer): Promise<number> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${TOKENS.writer}` } });
  ws.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  ws.send(frame, { binary: false });
  return closed;
}

async function closedCount(url: string, code: number): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^talkgate_ws_closed_total\\{code="${code}"\\} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

async function waitUntil(predicate: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await predicate())) await new Promise((r) => setTimeout(r, 10));
}

describe("client protocol faults", () => {
  it("invalid UTF-8 closes with 1007 and an oversized frame with 1009, and the metric counts those codes", async () => {
    h = await startGateway({ options: { maxPayloadBytes: 4096 } });
    expect(await sendOnce(h.wsUrl, INVALID_UTF8)).toBe(1007);
    expect(await sendOnce(h.wsUrl, Buffer.from(JSON.stringify({ pad: "x".repeat(8000) })))).toBe(1009);
    await waitUntil(async () => (await closedCount(h!.httpUrl, 1009)) === 1);
    expect(await closedCount(h.httpUrl, 1007)).toBe(1);
    expect(await closedCount(h.httpUrl, 1009)).toBe(1);
    expect(await closedCount(h.httpUrl, 1006)).toBe(0);
  });

  it("1,000 invalid-UTF-8 frames give a bounded number of warning lines with the reason, and no error lines", async () => {
    h = await startGateway();
    const total = 1000;
    for (let sent = 0; sent < total; sent += 50) {
      const batch = Array.from({ length: Math.min(50, total - sent) }, () =>
        sendOnce(h!.wsUrl, INVALID_UTF8),
      );
      expect(new Set(await Promise.all(batch))).toEqual(new Set([1007]));
    }
    await waitUntil(async () => (await closedCount(h!.httpUrl, 1007)) === total);
    const faults = h.logLines.filter((l) => l["reason"] === "invalid_utf8");
    expect(faults.length).toBeGreaterThan(0);
    // 10 per reason per minute: one window, or two if the run straddles a boundary.
    expect(faults.length).toBeLessThanOrEqual(20);
    expect(faults.every((l) => l["level"] === 40)).toBe(true);
    expect(h.logLines.filter((l) => (l["level"] as number) >= 50)).toEqual([]);
  });

  it("1,000 bad frames on a media stream give a bounded number of log lines; the call goes on", async () => {
    t = await startTelephony({ mode: "stt-tts" });
    const call = await t.dial();
    for (let i = 0; i < 1000; i++) call.sendRaw("{not json");
    call.sendDtmf("7");
    await waitUntil(() =>
      t!.events.some(
        (e) => e.type === "transcript.done" && (e.payload as { digits?: string }).digits === "7",
      ),
    );
    const lines = t.logs.filter((l) => String(l["msg"]).includes("frame rejected"));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(call.closeCode).toBeUndefined();
    await call.stop();
  });
});
