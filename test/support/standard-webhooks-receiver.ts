import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Verification as a receiver does it, written from the Standard Webhooks
 * specification (standardwebhooks.com, "Verifying webhook authenticity"):
 * `webhook-id`, `webhook-timestamp` and `webhook-signature` present, the
 * timestamp within `toleranceSec` of now, the key the base64 after `whsec_`,
 * HMAC-SHA256 over `<id>.<timestamp>.<raw body>`, and any of the
 * space-separated `v1,<base64>` signatures equal in constant time.
 */
export function verifyStandardWebhook(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  nowSec = Math.floor(Date.now() / 1000),
  toleranceSec = 300,
): boolean {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSec - Number(timestamp)) > toleranceSec) return false;
  const key = secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret, "utf8");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(" ").some((entry) => {
    const [version, sig] = entry.split(",");
    if (version !== "v1" || !sig) return false;
    const got = Buffer.from(sig, "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/**
 * A local webhook receiver: verifies every delivery with the scheme above
 * (401 when it fails), processes each `webhook-id` once (a repeat is answered
 * 200 and not processed again, the spec's idempotency advice), and answers
 * the first deliveries with `failFirst` statuses to exercise retries.
 */
export async function startStandardWebhookReceiver(secret: string, failFirst: number[] = []) {
  const events: { id: string; event: Record<string, unknown> }[] = [];
  let deliveries = 0;
  let rejected = 0;
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      deliveries++;
      const fail = failFirst.shift();
      if (fail !== undefined) {
        res.statusCode = fail;
        res.end();
        return;
      }
      if (!verifyStandardWebhook(secret, req.headers, body)) {
        rejected++;
        res.statusCode = 401;
        res.end();
        return;
      }
      const id = String(req.headers["webhook-id"]);
      if (!seen.has(id)) {
        seen.add(id);
        events.push({ id, event: JSON.parse(body) as Record<string, unknown> });
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    events,
    get deliveries() {
      return deliveries;
    },
    get rejected() {
      return rejected;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
