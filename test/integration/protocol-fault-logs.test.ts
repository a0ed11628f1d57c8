/**
 * Client protocol faults are the client's, not the server's: on /talk an
 * invalid-UTF-8 or oversized frame closes that socket with 1007 / 1009, the
 * close code actually sent is what talkgate_ws_closed_total counts, and the
 * log gets a warning with the reason, rate-limited per reason per window, not
 * an error line with a stack per frame. The media stream's frame rejections
 * go through the same windowed limiter, and so do the refusals of callers
 * that never authenticated: stream sockets with a forged token, webhooks and
 * status callbacks with a bad signature (one line each would let anyone
 * write the log at the rate they can open sockets).
 */
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type GatewayHarness, startGateway, TOKENS } from "../support/gateway-harness.js";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";
import { ACCOUNT_SID, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

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

  it("200 forged stream tokens and 200 badly signed webhooks give at most 10 lines per reason, every refusal counted", async () => {
    t = await startTelephony({ mode: "stt-tts" });
    const forged = async (i: number): Promise<number | undefined> => {
      const client = new TwilioStreamClient({
        url: `${t!.baseUrl.replace(/^http/, "ws")}/telephony/twilio/stream`,
        customParameters: { token: `forged-${i}` },
        callSid: `CAforged${i}`,
        accountSid: ACCOUNT_SID,
      });
      await client.connect();
      await client.waitFor(() => client.closeCode !== undefined);
      return client.closeCode;
    };
    const params = { CallSid: "CAbad", AccountSid: ACCOUNT_SID, From: "+15551112222", To: "+15550001111" };
    for (let sent = 0; sent < 200; sent += 20) {
      const batch = Array.from({ length: 20 }, (_, i) => forged(sent + i));
      expect(new Set(await Promise.all(batch))).toEqual(new Set([1008]));
      const hooks = await Promise.all(
        Array.from({ length: 20 }, () => t!.webhook(params, "bm90LWEtc2lnbmF0dXJl")),
      );
      expect(new Set(hooks.map((r) => r.status))).toEqual(new Set([403]));
    }
    // Closing the server writes what the open windows suppressed: every refusal is accounted for.
    const logs = t.logs;
    await t.close();
    t = undefined;
    const tokenLines = logs.filter((l) => String(l["msg"]).includes("token refused"));
    const signatureLines = logs.filter((l) => String(l["msg"]).includes("signature rejected"));
    // A line stands for itself and for what was suppressed before it; a window's closing count only for those.
    const said = (lines: Record<string, unknown>[]): number =>
      lines.reduce(
        (n, l) => n + (l["windowEnded"] === true ? 0 : 1) + ((l["suppressed"] as number | undefined) ?? 0),
        0,
      );
    for (const lines of [tokenLines, signatureLines]) {
      // 10 per reason per minute (one window, or two if the run straddles a boundary), then the count.
      expect(lines.length).toBeGreaterThan(1);
      expect(lines.length).toBeLessThanOrEqual(22);
      expect(lines.every((l) => l["level"] === 40)).toBe(true);
      expect(said(lines)).toBe(200);
    }
  });
});
