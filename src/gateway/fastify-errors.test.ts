import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime } from "../core/session-runtime.js";
import type { GatewayDeps } from "./gateway-deps.js";
import { createGatewayServer, type GatewayServer } from "./gateway-server.js";
import { replyError } from "./reply-error.js";
import { TalkError } from "../core/errors.js";

let server: GatewayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A gateway with a JSON route in a plugin of its own, as the surfaces register theirs (DELETE /meetings/bots/:id). */
async function gateway(): Promise<GatewayServer> {
  // These routes read nothing of the dependencies but the runtime.
  server = createGatewayServer({ runtime: createTalkRuntime() } as unknown as GatewayDeps, { port: 0 });
  await server.app.register(async (scope) => {
    scope.delete<{ Params: { id: string } }>("/meetings/bots/:id", async (request, reply) =>
      replyError(reply, new TalkError("session_not_found", `No bot ${request.params.id}.`)),
    );
    scope.post("/things", async (request) => ({ got: request.body }));
  });
  await server.app.ready();
  return server;
}

describe("Fastify's own errors in the Talk error shape (docs/errors.md)", () => {
  it("an empty JSON body on DELETE answers invalid_request, not Fastify's {statusCode, error}", async () => {
    const { app } = await gateway();
    const res = await app.inject({
      method: "DELETE",
      url: "/meetings/bots/b1",
      headers: { "content-type": "application/json" },
      payload: "",
    });
    expect(res.statusCode).toBe(400);
    const body = res.json<{
      error: { code: string; message: string; retryable: boolean; details: unknown };
    }>();
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error).toMatchObject({
      code: "invalid_request",
      retryable: false,
      details: { reason: "FST_ERR_CTP_EMPTY_JSON_BODY" },
    });
    expect(body.error.message).toMatch(/empty/i);
  });

  it("malformed JSON, a wrong content type, a body past the limit and an unknown route each get a stable code", async () => {
    const { app } = await gateway();
    const malformed = await app.inject({
      method: "POST",
      url: "/things",
      headers: { "content-type": "application/json" },
      payload: '{"a":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: { code: "invalid_request", retryable: false } });

    const wrongType = await app.inject({
      method: "POST",
      url: "/things",
      headers: { "content-type": "application/x-unknown" },
      payload: "a=1",
    });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json()).toMatchObject({
      error: { code: "unsupported_media_type", details: { reason: "FST_ERR_CTP_INVALID_MEDIA_TYPE" } },
    });

    const tooLarge = await app.inject({
      method: "POST",
      url: "/things",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ a: "x".repeat(1_100_000) }),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ error: { code: "payload_too_large" } });

    const unknown = await app.inject({ method: "GET", url: "/no/such/route?x=secret" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      error: { code: "route_not_found", message: "No route GET /no/such/route.", retryable: false },
    });

    // The route itself still answers, and a route's own TalkError keeps its code.
    const ok = await app.inject({ method: "POST", url: "/things", payload: { a: 1 } });
    expect(ok.json()).toEqual({ got: { a: 1 } });
    const own = await app.inject({ method: "DELETE", url: "/meetings/bots/b2" });
    expect(own.statusCode).toBe(404);
    expect(own.json()).toMatchObject({ error: { code: "session_not_found", message: "No bot b2." } });
  });
});
