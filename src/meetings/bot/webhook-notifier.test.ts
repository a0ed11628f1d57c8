import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import { signWebhook, WebhookNotifier } from "./webhook-notifier.js";

const SECRET = "webhook-secret-0123456789";

interface Received {
  body: string;
  headers: IncomingMessage["headers"];
}

async function receiver(
  statuses: number[],
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ body, headers: req.headers });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe("meeting webhooks", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it("signs each body with HMAC-SHA256 over timestamp and body, and retries 5xx until delivered, in order", async () => {
    const r = await receiver([503, 500, 200, 200]);
    close = r.close;
    const notifier = new WebhookNotifier(
      { url: r.url, secret: SECRET, maxAttempts: 5, initialBackoffMs: 1, timeoutMs: 5000 },
      NOOP_LOGGER,
      new AbortController().signal,
    );
    void notifier.notify({ state: "joining" });
    await notifier.notify({ state: "in_call" });
    expect(r.received.map((x) => JSON.parse(x.body).state)).toEqual([
      "joining",
      "joining",
      "joining",
      "in_call",
    ]);
    expect(r.received.map((x) => x.headers["x-talkgate-attempt"])).toEqual(["1", "2", "3", "1"]);
    for (const x of r.received) {
      expect(x.headers["x-talkgate-signature"]).toBe(
        signWebhook(SECRET, String(x.headers["x-talkgate-timestamp"]), x.body),
      );
    }
    expect(
      signWebhook(
        "another-secret-0123456789",
        String(r.received[0]!.headers["x-talkgate-timestamp"]),
        r.received[0]!.body,
      ),
    ).not.toBe(r.received[0]!.headers["x-talkgate-signature"]);
  });

  it("gives up at once on a 4xx other than 429", async () => {
    const r = await receiver([400, 200]);
    close = r.close;
    const notifier = new WebhookNotifier(
      { url: r.url, secret: SECRET, maxAttempts: 5, initialBackoffMs: 1, timeoutMs: 5000 },
      NOOP_LOGGER,
      new AbortController().signal,
    );
    await notifier.notify({ state: "ended" });
    expect(r.received).toHaveLength(1);
  });
});
