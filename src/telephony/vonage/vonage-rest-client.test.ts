import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FakeVonageRestServer,
  vonageApplicationKeys,
} from "../../../test/support/fake-vonage-rest-server.js";
import { VonageRestClient } from "./vonage-rest-client.js";

const APP = "11111111-2222-3333-4444-555555555555";
const keys = vonageApplicationKeys();
const server = new FakeVonageRestServer(APP, keys.publicKey);
const signal = () => AbortSignal.timeout(5000);
let client: VonageRestClient;

beforeAll(async () => {
  await server.start();
  client = new VonageRestClient({ applicationId: APP, privateKey: keys.privateKeyPem, baseUrl: server.url });
});
afterAll(() => server.close());

describe("VonageRestClient against a local Voice API", () => {
  it("dials with the number, caller id, the NCCO inline and the event URL; the call's uuid comes back", async () => {
    const call = await client.dial({
      to: "+447700900111",
      from: "+447700900000",
      stream: {
        url: "wss://talkgate.example/telephony/vonage/stream",
        parameters: { token: "t1ab", callId: "dial-1" },
      },
      statusCallbackUrl: "https://talkgate.example/telephony/vonage/events?job=call-1",
      signal: signal(),
    });
    const created = server.requests.find((r) => r.method === "POST")!;
    expect(call).toEqual({ callId: created.uuid, status: "started" });
    expect(created.body).toEqual({
      to: [{ type: "phone", number: "447700900111" }],
      from: { type: "phone", number: "447700900000" },
      ncco: [
        {
          action: "connect",
          endpoint: [
            {
              type: "websocket",
              uri: "wss://talkgate.example/telephony/vonage/stream",
              "content-type": "audio/l16;rate=16000",
              headers: { token: "t1ab", callId: "dial-1" },
            },
          ],
        },
      ],
      event_url: ["https://talkgate.example/telephony/vonage/events?job=call-1"],
      event_method: "POST",
    });
  });

  it("hangs up and transfers with PUT /v1/calls/{uuid}", async () => {
    const uuid = crypto.randomUUID();
    server.knowCall(uuid);
    await client.transfer(uuid, "+447700900222", signal());
    expect(server.requests.at(-1)).toMatchObject({
      method: "PUT",
      path: `/v1/calls/${uuid}`,
      body: {
        action: "transfer",
        destination: {
          type: "ncco",
          ncco: [{ action: "connect", endpoint: [{ type: "phone", number: "447700900222" }] }],
        },
      },
    });
    await client.hangUp(uuid, { signal: signal() });
    expect(server.requests.at(-1)).toMatchObject({ method: "PUT", body: { action: "hangup" } });
  });

  it("reports refusals as provider_error, outages as provider_unavailable, a cancelled request as cancelled", async () => {
    await expect(client.hangUp(crypto.randomUUID(), { signal: signal() })).rejects.toMatchObject({
      code: "provider_error",
      details: { status: 404 },
    });
    const stranger = new VonageRestClient({
      applicationId: APP,
      privateKey: vonageApplicationKeys().privateKeyPem,
      baseUrl: server.url,
    });
    const before = server.unauthorized;
    await expect(stranger.hangUp(crypto.randomUUID(), { signal: signal() })).rejects.toMatchObject({
      code: "provider_error",
      details: { status: 401 },
    });
    expect(server.unauthorized).toBe(before + 1);
    server.failCreates = true;
    const dial = {
      to: "+447700900111",
      from: "+447700900000",
      stream: { url: "wss://x/telephony/vonage/stream", parameters: { token: "t1ab", callId: "d" } },
      statusCallbackUrl: "https://x/telephony/vonage/events",
    };
    await expect(client.dial({ ...dial, signal: signal() })).rejects.toMatchObject({
      code: "provider_unavailable",
    });
    server.failCreates = false;
    await expect(client.dial({ ...dial, signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: "cancelled",
    });
    const unreachable = new VonageRestClient({
      applicationId: APP,
      privateKey: keys.privateKeyPem,
      baseUrl: "http://127.0.0.1:9",
    });
    await expect(unreachable.hangUp("u", { signal: signal() })).rejects.toMatchObject({
      code: "provider_unavailable",
    });
  });

  it("refuses a private key that is not an RSA PEM at construction, and accepts one with escaped newlines", () => {
    expect(() => new VonageRestClient({ applicationId: APP, privateKey: "not a key" })).toThrow(/PEM/);
    const escaped = keys.privateKeyPem.replace(/\n/g, "\\n");
    expect(() => new VonageRestClient({ applicationId: APP, privateKey: escaped })).not.toThrow();
  });
});
