/**
 * Outbound calls between two real worker processes on the shared Redis, as
 * behind a load balancer: the request lands on one worker, the
 * `outbound-call` job runs on whichever media worker takes it (the owner of
 * the call's session), and Twilio's status callback reaches any worker. A
 * callback on the worker that does not own the call must end the call on the
 * owner (through the job: BullMQ's cross-worker cancel), and both the job and
 * the caller (HTTP and Talk API, from any worker) must learn the outcome.
 * Twilio's REST API is a local server speaking its wire protocol.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import { isTalkError } from "../../src/core/errors.js";
import type { OutboundCallStatus } from "../../src/telephony/outbound/call-request.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import { FakeTwilioRestServer, type RestRequest } from "../support/fake-twilio-rest-server.js";
import { ACCOUNT_SID, ADMIN_TOKEN, AUTH_TOKEN, twilioConfig } from "../support/telephony-harness.js";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";

const WAIT = 20_000;
/** What Twilio calls (and signs); both workers sit behind it. */
const PUBLIC_URL = "http://talkgate.test";
const prefix = uniquePrefix("e2e-outbound");
const rest = new FakeTwilioRestServer(ACCOUNT_SID, AUTH_TOKEN);
const clients: Array<{ close(): Promise<void> }> = [];
let workers: [WorkerProcess, WorkerProcess];

beforeAll(async () => {
  await rest.start();
  const config = {
    server: { publicUrl: PUBLIC_URL },
    auth: { tokens: [{ name: "admin", token: ADMIN_TOKEN, scopes: ["admin"] }] },
    telephony: { twilio: twilioConfig(rest.url), defaultMode: "stt-tts" },
  };
  const common = {
    redisUrl: SHARED_REDIS_URL,
    keyPrefix: prefix,
    outboundCalls: "telephony" as const,
    config,
  };
  workers = (await WorkerProcess.startAll([
    { ...common, workerId: "calls-a" },
    { ...common, workerId: "calls-b" },
  ])) as [WorkerProcess, WorkerProcess];
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.all((workers ?? []).map((w) => w.stop()));
  await rest.close();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

interface QueuedCall {
  jobId: string;
  dial: RestRequest;
  callSid: string;
  statusUrl: string;
  /** The worker running the job: it dialled and holds the call's session. */
  owner: WorkerProcess;
  /** The other one, where the status callbacks land in these tests. */
  other: WorkerProcess;
}

async function queueCall(via: WorkerProcess, body: Record<string, unknown> = {}): Promise<QueuedCall> {
  const res = await fetch(`${via.httpUrl}/telephony/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ to: "+15557654321", ...body }),
  });
  expect(res.status).toBe(202);
  const { jobId } = (await res.json()) as { jobId: string };
  const statusUrl = `${PUBLIC_URL}/telephony/twilio/status?job=${jobId}`;
  const dial = await within(
    WAIT,
    rest.waitFor((r) => r.params.get("StatusCallback") === statusUrl),
    "the job's dial at the REST API",
  );
  const owner = await within(
    WAIT,
    Promise.race(
      workers.map((w) =>
        w.next((l) => l.msg === "outbound call: dialling" && l["jobId"] === jobId).then(() => w),
      ),
    ),
    "the dialling worker's log line",
  );
  const other = workers.find((w) => w !== owner)!;
  return { jobId, dial, callSid: dial.sid!, statusUrl, owner, other };
}

/** What Twilio does: a form POST to the status callback URL, signed over the public URL. */
function statusCallback(
  worker: WorkerProcess,
  statusUrl: string,
  params: Record<string, string>,
  signature = computeTwilioSignature(AUTH_TOKEN, statusUrl, params),
): Promise<Response> {
  const url = new URL(statusUrl);
  return fetch(`${worker.httpUrl}${url.pathname}${url.search}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
    body: new URLSearchParams(params),
  });
}

async function callStatus(worker: WorkerProcess, id: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${worker.httpUrl}/telephony/calls/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return { status: res.status, body: await res.json() };
}

/** Polls GET /telephony/calls/:jobId on `worker` until the call is in `state`. */
function statusOnceIn(
  state: OutboundCallStatus["state"],
  worker: WorkerProcess,
  jobId: string,
): Promise<OutboundCallStatus> {
  return eventually(
    WAIT,
    async () => {
      const { body } = await callStatus(worker, jobId);
      const status = body as OutboundCallStatus;
      if (status.state !== state) throw new Error(`state ${status.state}`);
      return status;
    },
    `the call's status ${state}`,
  );
}

/** The session.closed line of a session's event log on the worker that ran it. */
function sessionClosed(worker: WorkerProcess, sessionId: string): Promise<{ payload: { reason: string } }> {
  return eventually(
    WAIT,
    async () => {
      const lines = readFileSync(join(worker.dataDir, "sessions", `${sessionId}.jsonl`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; payload: { reason: string } });
      const closed = lines.filter((e) => e.type === "session.closed");
      if (closed.length !== 1) throw new Error(`${closed.length} session.closed events`);
      return closed[0]!;
    },
    "session.closed in the owner's session log",
  );
}

function jobCompleted(worker: WorkerProcess, jobId: string): Promise<unknown> {
  return within(
    WAIT,
    worker.probe("job-event", (l) => l["jobId"] === jobId && l["type"] === "completed"),
    `job ${jobId} completed, seen on ${worker.spec.workerId}`,
  );
}

describe("outbound calls across two workers", () => {
  it("busy before the owner has Twilio's answer (no session on any worker yet): the callback on the other worker ends the job busy, and every worker and the Talk API report it", async () => {
    rest.holdCreates = true;
    const call = await queueCall(workers[0]);
    const { owner, other } = call;
    // The owner's dial is still waiting for Twilio: no session anywhere, the job is running.
    expect((await callStatus(other, call.jobId)).body).toMatchObject({
      state: "dialling",
      jobId: call.jobId,
    });

    const res = await statusCallback(other, call.statusUrl, {
      CallSid: call.callSid,
      AccountSid: ACCOUNT_SID,
      CallStatus: "busy",
    });
    expect(res.status).toBe(204);
    // The cancel reached the job on the owner while its dial still waits; only then does Twilio answer the dial.
    await within(
      WAIT,
      owner.next((l) => l.msg === "outbound call: job signalled" && l["jobId"] === call.jobId),
      "the carrier's status reaches the owner's job",
    );
    expect(rest.requests.filter((r) => r.sid === call.callSid)).toHaveLength(1);
    rest.releaseCreates();

    const final = await statusOnceIn("ended", other, call.jobId);
    expect(final).toMatchObject({ state: "ended", reason: "busy", jobId: call.jobId, callSid: call.callSid });
    expect(final.sessionId).toEqual(expect.any(String));
    expect((await callStatus(owner, call.jobId)).body).toEqual(final);
    await Promise.all([jobCompleted(owner, call.jobId), jobCompleted(other, call.jobId)]);
    // The owner's session (created when Twilio's answer came) closed once, with the carrier's reason.
    expect((await sessionClosed(owner, final.sessionId!)).payload.reason).toBe("busy");
    // The carrier ended the call: no hang-up request.
    expect(rest.requests.filter((r) => r.path.endsWith(`/Calls/${call.callSid}.json`))).toHaveLength(0);

    // The Talk API caller reads the same outcome from any worker.
    const admin = await TalkClient.connect(other.talkUrl, { token: ADMIN_TOKEN });
    clients.push(admin);
    expect(await admin.requestUntyped("telephony.call.get", { id: call.jobId })).toEqual(final);

    // Twilio repeating the callback, to either worker: the call is known and ended.
    for (const w of workers) {
      const again = await statusCallback(w, call.statusUrl, {
        CallSid: call.callSid,
        AccountSid: ACCOUNT_SID,
        CallStatus: "busy",
      });
      expect(again.status).toBe(204);
    }
  });

  it("no-answer after the dial: the callback on the other worker closes the owner's session with no-answer", async () => {
    const call = await queueCall(workers[1]);
    const { owner, other } = call;
    const placed = await statusOnceIn("placed", other, call.jobId);
    expect(placed.sessionId).toEqual(expect.any(String));

    const res = await statusCallback(other, call.statusUrl, {
      CallSid: call.callSid,
      AccountSid: ACCOUNT_SID,
      CallStatus: "no-answer",
    });
    expect(res.status).toBe(204);
    const final = await statusOnceIn("ended", other, call.jobId);
    expect(final).toEqual({ ...placed, state: "ended", reason: "no-answer" });
    expect((await sessionClosed(owner, placed.sessionId!)).payload.reason).toBe("no-answer");
    await jobCompleted(other, call.jobId);
  });

  it("a connected call: the completed callback on the other worker ends the session on the owner, whose line and events stream close with completed", async () => {
    const call = await queueCall(workers[0], { greeting: "Hello from the cluster test." });
    const { owner, other } = call;
    // The stream goes to the worker that placed the call (sticky routing; the token lives there).
    const twiml = call.dial.params.get("Twiml")!;
    const parameters = Object.fromEntries(
      [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const placed = await statusOnceIn("placed", owner, call.jobId);
    const stream = new TwilioStreamClient({
      url: `${owner.httpUrl.replace(/^http/, "ws")}/telephony/twilio/stream`,
      customParameters: parameters,
      callSid: call.callSid,
      accountSid: ACCOUNT_SID,
      playback: "immediate",
    });
    clients.push(stream);
    await stream.connect();
    // Connected: the greeting plays on the line.
    await within(
      WAIT,
      stream.waitFor(() => stream.receivedAudioMs > 0),
      "the greeting on the line",
    );

    // Watch the call's events on the owner (the session is there).
    const events = await fetch(`${owner.httpUrl}/telephony/calls/${call.callSid}/events`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(events.status).toBe(200);
    const closedEvent = readUntilClosed(events);

    const res = await statusCallback(other, call.statusUrl, {
      CallSid: call.callSid,
      AccountSid: ACCOUNT_SID,
      CallStatus: "completed",
    });
    expect(res.status).toBe(204);

    expect(await within(WAIT, closedEvent, "session.closed on the events stream")).toMatchObject({
      sessionId: placed.sessionId,
      payload: { reason: "completed" },
    });
    await within(
      WAIT,
      stream.waitFor(() => stream.closeCode !== undefined),
      "the owner closes the stream",
    );
    const final = await statusOnceIn("ended", other, call.jobId);
    expect(final).toEqual({ ...placed, state: "ended", reason: "completed" });
    await jobCompleted(other, call.jobId);
  });

  it("an AMD result that reaches the other worker is relayed to the dialling worker, which hangs up on the machine", async () => {
    const res = await fetch(`${workers[0].httpUrl}/telephony/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ to: "+15557654321", machineDetection: { policy: "hangup" } }),
    });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };
    const dial = await within(
      WAIT,
      rest.waitFor((r) => (r.params.get("StatusCallback") ?? "").includes(`job=${jobId}`)),
      "the job's dial at the REST API",
    );
    // The dial names the worker that runs the detection; Twilio posts the result to that URL.
    const amdUrl = dial.params.get("AsyncAmdStatusCallback")!;
    const dialledBy = new URL(amdUrl).searchParams.get("worker");
    const owner = workers.find((w) => w.spec.workerId === dialledBy)!;
    expect(owner).toBeDefined();
    const other = workers.find((w) => w !== owner)!;
    const placed = await statusOnceIn("placed", other, jobId);
    // The callee picks up: the stream reaches the owner (detection acts on a connected call).
    const twiml = dial.params.get("Twiml")!;
    const stream = new TwilioStreamClient({
      url: `${owner.httpUrl.replace(/^http/, "ws")}/telephony/twilio/stream`,
      customParameters: Object.fromEntries(
        [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
      ),
      callSid: dial.sid!,
      accountSid: ACCOUNT_SID,
    });
    clients.push(stream);
    await stream.connect();

    const params = { CallSid: dial.sid!, AccountSid: ACCOUNT_SID, AnsweredBy: "machine_start" };
    const relayed = await statusCallback(other, amdUrl, params);
    expect(relayed.status).toBe(204);
    // The owner applied it: the machine is hung up on at the carrier, and the call ends there.
    await within(
      WAIT,
      rest.waitFor(
        (r) => r.path.endsWith(`/Calls/${dial.sid}.json`) && r.params.get("Status") === "completed",
      ),
      "the owner's hang-up at the carrier",
    );
    expect((await sessionClosed(owner, placed.sessionId!)).payload.reason).toBe("hung_up");
    const final = await statusOnceIn("ended", other, jobId);
    expect(final).toMatchObject({
      state: "ended",
      machineDetection: { answeredBy: "machine", carrierResult: "machine_start", action: "hung_up" },
    });

    // A result naming a worker that is gone is owner_unreachable (the carrier may retry), not a silent 204.
    const gone = new URL(amdUrl);
    gone.searchParams.set("worker", "calls-gone");
    const unreachable = await statusCallback(other, gone.toString(), params);
    expect(unreachable.status).toBe(503);
    expect(((await unreachable.json()) as { error: { code: string } }).error.code).toBe("owner_unreachable");
  });

  it("forged, malformed and unknown callbacks get 403 / 400 / 404 on either worker, and the workers go on", async () => {
    const [a, b] = workers;
    const statusUrl = `${PUBLIC_URL}/telephony/twilio/status`;
    const unknown = { CallSid: `CA${"f".repeat(32)}`, AccountSid: ACCOUNT_SID, CallStatus: "completed" };

    const forged = await statusCallback(a, `${statusUrl}?job=call-x`, unknown, "bm90LWEtc2lnbmF0dXJl");
    expect(forged.status).toBe(403);

    const noJob = await statusCallback(b, statusUrl, unknown);
    expect(noJob.status).toBe(404);
    expect(((await noJob.json()) as { error: { code: string } }).error.code).toBe("session_not_found");

    const unknownJob = await statusCallback(a, `${statusUrl}?job=call-unknown`, unknown);
    expect(unknownJob.status).toBe(404);
    expect(((await unknownJob.json()) as { error: { message: string } }).error.message).toContain(
      "call-unknown",
    );

    const noStatus = await statusCallback(b, statusUrl, {
      CallSid: unknown.CallSid,
      AccountSid: ACCOUNT_SID,
    });
    expect(noStatus.status).toBe(400);

    expect((await callStatus(a, "call-unknown")).status).toBe(404);
    expect((await callStatus(b, "not a call id")).status).toBe(400);
    const admin = await TalkClient.connect(b.talkUrl, { token: ADMIN_TOKEN });
    clients.push(admin);
    const err = await admin.requestUntyped("telephony.call.get", { id: "call-unknown" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTalkError(err) && err.code).toBe("session_not_found");

    for (const w of workers) expect((await w.readyz()).status).toBe(200);
  });
});

/** Reads a call's SSE events stream until its session.closed event. */
async function readUntilClosed(res: Response): Promise<{ sessionId: string; payload: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("events stream ended without session.closed");
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? ""; // an incomplete line waits for the rest
    for (const line of lines) {
      if (!line.startsWith("data: ")) continue;
      const event = JSON.parse(line.slice(6)) as { type: string; sessionId: string; payload: unknown };
      if (event.type === "session.closed") {
        await reader.cancel();
        return event;
      }
    }
  }
}
