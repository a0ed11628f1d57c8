import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { replyError } from "./reply-error.js";

describe("replyError: the one error -> HTTP answer", () => {
  it("answers a TalkError with its code's status and its wire shape; anything else is a 500 without internals", async () => {
    const logged: unknown[] = [];
    const app = Fastify({ logger: false });
    app.get("/talk-error", async (_request, reply) =>
      replyError(reply, new TalkError("session_not_found", "No such bot.", { details: { botId: "b1" } })),
    );
    app.get("/unauthorized", async (_request, reply) => replyError(reply, new TalkError("unauthorized")));
    app.get("/crash", async (request, reply) => {
      request.log.error = ((obj: unknown) => void logged.push(obj)) as never;
      return replyError(reply, new Error("db password is hunter2"));
    });

    const notFound = await app.inject({ url: "/talk-error" });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.json()).toEqual({
      error: {
        code: "session_not_found",
        message: "No such bot.",
        retryable: false,
        details: { botId: "b1" },
      },
    });

    const unauthorized = await app.inject({ url: "/unauthorized" });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.headers["www-authenticate"]).toBe('Bearer realm="talkgate"');

    const crash = await app.inject({ url: "/crash" });
    expect(crash.statusCode).toBe(500);
    expect(crash.json()).toEqual({
      error: { code: "internal", message: "Internal error.", retryable: true },
    });
    expect(crash.body).not.toContain("hunter2");
    expect(logged).toHaveLength(1);
    await app.close();
  });
});
