import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { FakePlivoRestServer } from "../../../test/support/fake-plivo-rest-server.js";
import { isTalkError } from "../../core/index.js";
import { PlivoCallIds, PlivoRestClient } from "./plivo-rest-client.js";

const AUTH_ID = "MAPLIVOTESTACCOUNT01";
const AUTH_TOKEN = "plivo-rest-test-token";

const dialRequest = (signal: AbortSignal) => ({
  to: "+15550002222",
  from: "+15550001111",
  stream: { url: "wss://x/telephony/plivo/stream", parameters: { token: "t1ab" } },
  answerUrl: "https://x/telephony/plivo/answer?token=t1ab",
  statusCallbackUrl: "https://x/telephony/plivo/status?job=call-1",
  signal,
});

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (err: unknown) => (isTalkError(err) ? err.code : "not a TalkError"),
  );
}

describe("Plivo REST client", () => {
  let rest: FakePlivoRestServer | undefined;
  afterEach(async () => {
    await rest?.close();
    rest = undefined;
  });

  it("dials with answer_url and hangup_url, cancels while ringing, hangs up the live CallUUID", async () => {
    rest = new FakePlivoRestServer(AUTH_ID, AUTH_TOKEN);
    const ids = new PlivoCallIds();
    const client = new PlivoRestClient({
      authId: AUTH_ID,
      authToken: AUTH_TOKEN,
      baseUrl: await rest.start(),
      ids,
    });
    const signal = AbortSignal.timeout(5000);
    const call = await client.dial(dialRequest(signal));
    const created = rest.requests[0]!;
    expect(created.path).toBe(`/v1/Account/${AUTH_ID}/Call/`);
    expect(call).toEqual({ callId: created.requestUuid, status: "queued" });
    const callId = call.callId!;
    expect(created.body).toEqual({
      from: "15550001111",
      to: "15550002222",
      answer_url: "https://x/telephony/plivo/answer?token=t1ab",
      answer_method: "POST",
      hangup_url: "https://x/telephony/plivo/status?job=call-1",
      hangup_method: "POST",
    });
    await client.hangUp(callId, { signal, ringing: true });
    expect(rest.requests[1]).toMatchObject({
      method: "DELETE",
      path: `/v1/Account/${AUTH_ID}/Request/${callId}/`,
    });
    // Answered: the stream taught the pair; the hang-up reaches the live call.
    const callUuid = rest.answer(callId);
    ids.link(callId, callUuid);
    await client.hangUp(callId, { signal });
    expect(rest.requests[2]).toMatchObject({
      method: "DELETE",
      path: `/v1/Account/${AUTH_ID}/Call/${callUuid}/`,
    });
    expect(await codeOf(client.transfer(callId, "+15550003333", signal))).toBe("capability_unsupported");
    expect(await codeOf(client.dial({ ...dialRequest(signal), answerUrl: undefined }))).toBe(
      "invalid_params",
    );
  });

  it("a call never streamed is cancelled by its request_uuid after Plivo answers 404 for the Call", async () => {
    rest = new FakePlivoRestServer(AUTH_ID, AUTH_TOKEN);
    const client = new PlivoRestClient({
      authId: AUTH_ID,
      authToken: AUTH_TOKEN,
      baseUrl: await rest.start(),
    });
    const signal = AbortSignal.timeout(5000);
    const call = await client.dial(dialRequest(signal));
    await client.hangUp(call.callId!, { signal });
    expect(rest.requests.slice(1).map((r) => r.path)).toEqual([
      `/v1/Account/${AUTH_ID}/Call/${call.callId}/`,
      `/v1/Account/${AUTH_ID}/Request/${call.callId}/`,
    ]);
    expect(await codeOf(client.hangUp("00000000-0000-4000-8000-000000000000", { signal }))).toBe(
      "provider_error",
    );
  });

  it("maps refusals, outages and aborts to TalkErrors", async () => {
    rest = new FakePlivoRestServer(AUTH_ID, AUTH_TOKEN);
    const base = await rest.start();
    const signal = AbortSignal.timeout(5000);
    const wrongKey = new PlivoRestClient({ authId: AUTH_ID, authToken: "wrong", baseUrl: base });
    expect(await codeOf(wrongKey.dial(dialRequest(signal)))).toBe("provider_error");
    const failing = createServer((_req, res) => res.writeHead(503).end("{}"));
    await new Promise<void>((r) => failing.listen(0, "127.0.0.1", r));
    const port = (failing.address() as AddressInfo).port;
    const down = new PlivoRestClient({
      authId: AUTH_ID,
      authToken: AUTH_TOKEN,
      baseUrl: `http://127.0.0.1:${port}`,
    });
    expect(await codeOf(down.dial(dialRequest(signal)))).toBe("provider_unavailable");
    await new Promise<void>((r) => failing.close(() => r()));
    expect(await codeOf(down.dial(dialRequest(signal)))).toBe("provider_unavailable");
    const client = new PlivoRestClient({ authId: AUTH_ID, authToken: AUTH_TOKEN, baseUrl: base });
    expect(await codeOf(client.dial(dialRequest(AbortSignal.abort())))).toBe("cancelled");
    expect(() => new PlivoRestClient({ authId: "", authToken: AUTH_TOKEN })).toThrow(/authId/);
    expect(() => new PlivoRestClient({ authId: AUTH_ID, authToken: AUTH_TOKEN, baseUrl: "ftp://x" })).toThrow(
      /http/,
    );
  });
});
