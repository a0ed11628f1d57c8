/**
 * Outbound calls as `outbound-call` jobs (redis.url set: BullMQ on the
 * shared test Redis, this worker has the media role): the request answers
 * with the job, the job dials and holds the call's session, a status
 * callback ends it with the carrier's reason, cancelling the job hangs up.
 */
import { afterEach, describe, expect, it } from "vitest";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import {
  ACCOUNT_SID,
  ADMIN_TOKEN,
  AUTH_TOKEN,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
let prefix = "";
afterEach(async () => {
  await h?.close();
  h = undefined;
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

async function start(): Promise<TelephonyHarness> {
  prefix = uniquePrefix("telephony");
  return startTelephony({ mode: "stt-tts", config: { redis: { url: SHARED_REDIS_URL, keyPrefix: prefix } } });
}

async function queueCall(
  harness: TelephonyHarness,
): Promise<{ jobId: string; sessionId: string; callSid: string; statusUrl: string }> {
  const res = await fetch(`${harness.baseUrl}/telephony/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ to: "+15557654321" }),
  });
  expect(res.status).toBe(202);
  const { jobId, status } = (await res.json()) as { jobId: string; status: string };
  expect(status).toBe("queued");
  const dial = await harness.rest.waitFor((r) => r.path.endsWith("/Calls.json"));
  const statusUrl = dial.params.get("StatusCallback")!;
  expect(statusUrl).toBe(`${harness.publicUrl}/telephony/twilio/status?job=${jobId}`);
  let session = harness.app.runtime.listSessions().find((s) => s.metadata["jobId"] === jobId);
  while (!session) {
    await new Promise((r) => setTimeout(r, 5));
    session = harness.app.runtime.listSessions().find((s) => s.metadata["jobId"] === jobId);
  }
  return { jobId, sessionId: session.id, callSid: session.metadata["callSid"]!, statusUrl };
}

describe("telephony: outbound calls as jobs", () => {
  it("a queued call is dialled by the job and a signed busy callback closes its session with busy", async () => {
    h = await start();
    const { sessionId, callSid, statusUrl } = await queueCall(h);
    const params = { CallSid: callSid, AccountSid: ACCOUNT_SID, CallStatus: "busy" };
    const res = await fetch(`${h.baseUrl}${new URL(statusUrl).pathname}${new URL(statusUrl).search}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": computeTwilioSignature(AUTH_TOKEN, statusUrl, params),
      },
      body: new URLSearchParams(params),
    });
    expect(res.status).toBe(204);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "busy" });
  });

  it("cancelling the job hangs the call up through the REST API and closes the session as cancelled", async () => {
    h = await start();
    const { jobId, sessionId, callSid } = await queueCall(h);
    await h.app.cluster.jobs.cancel(jobId, "operator");
    const hangUp = await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${callSid}.json`));
    expect(hangUp.params.get("Status")).toBe("canceled"); // never answered: cancel, not complete
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "cancelled" });
  });

  it("a dial that fails is not retried: dialling is not idempotent, the job fails once", async () => {
    h = await start();
    h.rest.failCreates = true;
    const res = await fetch(`${h.baseUrl}/telephony/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ to: "+15557654321" }),
    });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    let record = await h.app.cluster.jobs.inspect(jobId);
    while (record?.state !== "failed") {
      await new Promise((r) => setTimeout(r, 20));
      record = await h.app.cluster.jobs.inspect(jobId);
    }
    // The cluster's default is two attempts with a backoff; give a retry time to show up if it were made.
    await new Promise((r) => setTimeout(r, 1500));
    expect(h.rest.requests.filter((r) => r.path.endsWith("/Calls.json"))).toHaveLength(1);
    expect((await h.app.cluster.jobs.inspect(jobId))?.state).toBe("failed");
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
