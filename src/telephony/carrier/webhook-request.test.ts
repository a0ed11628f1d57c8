import formbody from "@fastify/formbody";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import type { CarrierWebhookRequest } from "./carrier-protocol.js";
import { webhookBodyParsers, webhookRequest } from "./webhook-request.js";

async function echo(): Promise<{
  inject: (contentType: string, payload: string) => Promise<CarrierWebhookRequest>;
  close: () => Promise<void>;
}> {
  const app = Fastify();
  await app.register(formbody); // a parent's parser is replaced in the webhook's scope, not an error
  await app.register(async (scope) => {
    webhookBodyParsers(scope, 65_536);
    scope.post("/hook", async (request) => webhookRequest(request, "https://talk.example.org/"));
  });
  return {
    inject: async (contentType, payload) =>
      (
        await app.inject({
          method: "POST",
          url: "/hook?x=1",
          headers: { "content-type": contentType },
          payload,
        })
      ).json(),
    close: () => app.close(),
  };
}

describe("carrier webhook requests", () => {
  it("keeps the raw form body beside its fields (repeated names as arrays) and the URL the carrier signed", async () => {
    const server = await echo();
    const raw = "CallSid=CA1&Tag=a&Tag=b&From=%2B1555+0";
    const request = await server.inject("application/x-www-form-urlencoded", raw);
    expect(request.url).toBe("https://talk.example.org/hook?x=1");
    expect(request.rawBody).toBe(raw);
    expect(request.params).toEqual({ CallSid: "CA1", Tag: ["a", "b"], From: "+1555 0" });
    await server.close();
  });

  it("keeps the raw JSON body (signatures over the bytes received) beside its fields", async () => {
    const server = await echo();
    const raw = '{"data":{"event_type":"call.hangup"} ,"n":1}';
    const request = await server.inject("application/json", raw);
    expect(request.rawBody).toBe(raw);
    expect(request.params).toEqual({ data: { event_type: "call.hangup" }, n: 1 });
    await server.close();
  });
});
