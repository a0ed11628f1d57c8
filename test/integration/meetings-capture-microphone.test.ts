import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureScript } from "../../src/meetings/bot/capture-script.js";
import { startCapturePageHost, type CapturePageHost } from "../support/capture-page-host.js";

/**
 * The bot's microphone in a real Chromium page: the capture script's
 * getUserMedia answer is a Web Audio graph. A transcribing bot never speaks,
 * so its graph stays suspended (no audio rendered for it, measured in
 * bench/meetings.bench.ts: the renderer's AudioOutputDevice thread); a bot
 * that may speak has it running from the page's first getUserMedia.
 */
describe("the capture script's microphone", () => {
  let host: CapturePageHost;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    host = await startCapturePageHost();
    ({ browser, origin } = host);
  }, 60_000);

  afterAll(async () => {
    await host?.close();
  });

  /** The states of the page's AudioContexts after the platform asks for the microphone. */
  async function contextStates(microphone: "silent" | "assistant" | undefined): Promise<string[]> {
    const page = await browser.newPage();
    try {
      // Before the capture script: every AudioContext the page makes is kept, to read its state.
      await page.evaluateOnNewDocument(
        `(() => { const Base = window.AudioContext; window.__contexts = []; window.AudioContext = class extends Base { constructor(...a) { super(...a); window.__contexts.push(this); } }; })()`,
      );
      await page.evaluateOnNewDocument(
        captureScript({ url: "ws://127.0.0.1:9/capture", ...(microphone ? { microphone } : {}) }),
      );
      await page.goto(origin);
      return (await page.evaluate(`(async () => {
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
        if (stream.getAudioTracks().length !== 1) throw new Error("no microphone track");
        await new Promise((r) => setTimeout(r, 300));
        return window.__contexts.map((c) => c.state);
      })()`)) as string[];
    } finally {
      await page.close();
    }
  }

  it("keeps a transcribing bot's microphone graph suspended, and runs a speaking bot's", async () => {
    expect(await contextStates("silent")).toEqual(["suspended"]);
    expect(await contextStates("assistant")).toEqual(["running"]);
    expect(await contextStates(undefined)).toEqual(["running"]);
  }, 60_000);
});
