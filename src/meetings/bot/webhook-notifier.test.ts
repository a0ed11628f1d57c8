import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import type { MeetingsWebhookOptions } from "../meetings-options.js";
import { dependantSignals } from "../../../test/support/abort-traces.js";
import { verifyStandardWebhook } from "../../../test/support/standard-webhooks-receiver.js";
import { signWebhook, standardSignature, WebhookNotifier, webhookKey } from "./webhook-notifier.js";

// A Standard Webhooks secret: whsec_ + base64 of 32 random-looking bytes.
const SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
const OLD_SECRET = `whsec_${Buffer.from("fedcba9876543210fedcba9876543210").toString("base64")}`;

const verifyStandard = verifyStandardWebhook;

interface Received {
  body: string;
  headers: IncomingMessage["headers"];
}

/** A local receiver answering `statuses` in turn (then 200), deduplicating by webhook-id as the spec advises. */
async function receiver(statuses: (number | [number, Record<string, string>])[]) {
  const received: Received[] = [];
  const processed = new Map<string, string>();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push({ body, headers: req.headers });
      const next = statuses.shift() ?? 200;
      const [status, headers] = Array.isArray(next) ? next : [next, {}];
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
      res.statusCode = status;
      if (status === 200 && verifyStandard(SECRET, req.headers, body, Math.floor(Date.now() / 1000))) {
        processed.set(String(req.headers["webhook-id"]), body);
      }
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    processed,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const options = (
  url: string,
  more: Partial<MeetingsWebhookOptions> = {},
): Required<MeetingsWebhookOptions> => ({
  url,
  secret: SECRET,
  previousSecrets: [],
  events: ["meeting.bot.state", "meeting.transcript.line"],
  maxAttempts: 5,
  initialBackoffMs: 1,
  timeoutMs: 5000,
  ...more,
});

describe("Standard Webhooks signing", () => {
  it("matches the specification's reference vector", () => {
    const key = webhookKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(standardSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("takes a whsec_ secret as its decoded bytes, another string as UTF-8, and refuses a bad whsec_", () => {
    expect(webhookKey(SECRET).toString()).toBe("0123456789abcdef0123456789abcdef");
    expect(webhookKey("plain-shared-secret-123").toString()).toBe("plain-shared-secret-123");
    expect(() => webhookKey("whsec_not base64!")).toThrow(/base64/);
    expect(() => webhookKey(`whsec_${Buffer.alloc(8).toString("base64")}`)).toThrow(/24..64 bytes/);
  });
});

describe("meeting webhooks", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it("delivers in order, verifiable by the spec's scheme, retrying 5xx with the same id until delivered", async () => {
    const r = await receiver([503, 500, 200, 200]);
    close = r.close;
    const notifier = new WebhookNotifier(options(r.url), NOOP_LOGGER, new AbortController().signal);
    void notifier.notify({ type: "meeting.bot.state", state: "joining" }, "msg_b_state_1");
    await notifier.notify({ type: "meeting.bot.state", state: "in_call" }, "msg_b_state_2");
    expect(r.received.map((x) => JSON.parse(x.body).state)).toEqual([
      "joining",
      "joining",
      "joining",
      "in_call",
    ]);
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual([
      "msg_b_state_1",
      "msg_b_state_1",
      "msg_b_state_1",
      "msg_b_state_2",
    ]);
    const now = Math.floor(Date.now() / 1000);
    for (const x of r.received) {
      expect(verifyStandard(SECRET, x.headers, x.body, now)).toBe(true);
      // A tampered body, another secret or an old timestamp fail the same check.
      expect(verifyStandard(SECRET, x.headers, x.body.replace("in", "out"), now)).toBe(false);
      expect(verifyStandard(OLD_SECRET, x.headers, x.body, now)).toBe(false);
      expect(verifyStandard(SECRET, x.headers, x.body, now + 3600)).toBe(false);
      // The legacy headers stay for existing receivers.
      expect(x.headers["x-talkgate-signature"]).toBe(
        signWebhook(SECRET, String(x.headers["x-talkgate-timestamp"]), x.body),
      );
    }
    expect([...r.processed.keys()]).toEqual(["msg_b_state_1", "msg_b_state_2"]);
  });

  it("signs with every secret during a rotation: a receiver still on the old one verifies", async () => {
    const r = await receiver([]);
    close = r.close;
    const notifier = new WebhookNotifier(
      options(r.url, { previousSecrets: [OLD_SECRET] }),
      NOOP_LOGGER,
      new AbortController().signal,
    );
    await notifier.notify({ type: "meeting.transcript.line", index: 0 }, "msg_b_line_0");
    const x = r.received[0]!;
    expect(String(x.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    const now = Math.floor(Date.now() / 1000);
    expect(verifyStandard(SECRET, x.headers, x.body, now)).toBe(true);
    expect(verifyStandard(OLD_SECRET, x.headers, x.body, now)).toBe(true);
  });

  it("gives up at once on a 4xx other than 429, honours Retry-After, and stops for good on 410 Gone", async () => {
    const r = await receiver([400, [429, { "retry-after": "1" }], 200, 410]);
    close = r.close;
    const notifier = new WebhookNotifier(options(r.url), NOOP_LOGGER, new AbortController().signal);
    await notifier.notify({ n: 1 }, "msg_1");
    expect(r.received).toHaveLength(1);
    await notifier.notify({ n: 2 }, "msg_2");
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual(["msg_1", "msg_2", "msg_2"]);
    const [asked, retried] = [r.received[1]!, r.received[2]!].map((x) =>
      Number(x.headers["webhook-timestamp"]),
    );
    // Retry-After: 1 (second) was waited: the retry is signed at a later second.
    expect(retried! - asked!).toBeGreaterThanOrEqual(1);
    await notifier.notify({ n: 3 }, "msg_3");
    await notifier.notify({ n: 4 }, "msg_4");
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual(["msg_1", "msg_2", "msg_2", "msg_3"]);
  });

  it("times out a receiver that never answers and retries; its deliveries leave nothing on the shutdown signal", async () => {
    // The first request is held unanswered (a hung endpoint); later ones are answered 200.
    const requests: string[] = [];
    const held: Array<() => void> = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        requests.push(String(req.headers["webhook-id"]));
        if (requests.length === 1) held.push(() => res.destroy());
        else res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    close = () => {
      for (const h of held) h();
      return new Promise<void>((r) => server.close(() => r()));
    };
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const shutdown = new AbortController();
    const notifier = new WebhookNotifier(options(url, { timeoutMs: 200 }), NOOP_LOGGER, shutdown.signal);
    await notifier.notify({ n: 0 }, "msg_hung");
    expect(requests).toEqual(["msg_hung", "msg_hung"]);
    for (let i = 1; i <= 30; i++) await notifier.notify({ n: i }, `msg_${i}`);
    expect(requests).toHaveLength(32);
    // AbortSignal.any([shutdown, timeout]) per delivery left one entry per delivery on the process's signal.
    expect(dependantSignals(shutdown.signal)).toBe(0);
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
  });

  it("sends only the configured event types", () => {
    const notifier = new WebhookNotifier(
      options("http://127.0.0.1:9/x", { events: ["meeting.bot.state"] }),
      NOOP_LOGGER,
      new AbortController().signal,
    );
    expect(notifier.wants("meeting.bot.state")).toBe(true);
    expect(notifier.wants("meeting.transcript.line")).toBe(false);
  });
});
