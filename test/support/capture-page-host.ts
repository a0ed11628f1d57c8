import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import puppeteer, { type Browser } from "puppeteer-core";
import { WebSocketServer } from "ws";
import { BOT_CHROMIUM_ARGS } from "../../src/meetings/bot/browser-launcher.js";

/**
 * A loopback origin (a secure context, where getUserMedia and WebCodecs exist) serving a blank call
 * page, optionally a capture socket at `/capture`, and a headless Chromium with the bot's flags: where
 * the capture script's tests run it without a meeting.
 */
export interface CapturePageHost {
  readonly browser: Browser;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  close(): Promise<void>;
}

/** `onCaptureMessage`: given, a capture socket at `/capture` hands it every message a page sends. */
export async function startCapturePageHost(
  onCaptureMessage?: (data: Buffer, binary: boolean) => void,
): Promise<CapturePageHost> {
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end("<p>call"),
  );
  const sockets = onCaptureMessage ? new WebSocketServer({ server, path: "/capture" }) : undefined;
  sockets?.on("connection", (socket) => socket.on("message", onCaptureMessage!));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [...BOT_CHROMIUM_ARGS],
  });
  return {
    browser,
    origin,
    async close() {
      await browser.close();
      sockets?.close();
      server.close();
    },
  };
}
