import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import {
  applyCommand,
  parseSessionCommand,
  SESSION_COMMAND_VERBS,
  sessionCommandHandler,
  type SessionCommandHandlers,
} from "./session-command.js";
import { recordingLogger } from "../core/testing/recording-logger.js";

function caught(fn: () => unknown): TalkError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TalkError) return err;
    throw err;
  }
  throw new Error("expected a TalkError");
}

describe("session command table", () => {
  it("lists every verb once", () => {
    expect([...SESSION_COMMAND_VERBS].sort()).toEqual([
      "cancelOutput",
      "cancelTurn",
      "close",
      "join",
      "leave",
    ]);
  });

  it("parses a command against its verb's schema and keeps only what the schema names", () => {
    expect(parseSessionCommand({ verb: "cancelTurn" })).toEqual({ verb: "cancelTurn", params: {} });
    expect(
      parseSessionCommand({ verb: "join", params: { joinToken: "tok", afterSeq: 3, peer: "w1/c1" } }),
    ).toEqual({ verb: "join", params: { joinToken: "tok", afterSeq: 3, peer: "w1/c1" } });
  });

  it("refuses an unknown verb, a wrong type, a missing field and an unknown key with invalid_params", () => {
    for (const raw of [
      { verb: "explode" },
      { verb: "__proto__" },
      null,
      "cancelTurn",
      { verb: "cancelTurn", params: { turnId: 7 } },
      { verb: "join", params: { joinToken: "tok", peer: "w1/c1" } },
      { verb: "join", params: { joinToken: "tok", afterSeq: "3", peer: "w1/c1" } },
      { verb: "close", params: { reason: "client_request", sudo: true } },
      { verb: "leave", params: { peer: "no-slash" } },
    ]) {
      expect(caught(() => parseSessionCommand(raw)).code, JSON.stringify(raw)).toBe("invalid_params");
    }
  });

  it("the owner answers a malformed command with a coded reply, logs it, never runs the handler, and keeps serving", async () => {
    const logger = recordingLogger();
    const applied: unknown[] = [];
    const handler = (_sessionId: string, command: unknown): unknown => {
      applied.push(command);
      return { ok: "yes" };
    };
    const bad = await applyCommand(handler, "s-1", { verb: "cancelTurn", params: { turnId: [] } }, logger);
    expect(bad).toMatchObject({ ok: false, error: { code: "invalid_params" } });
    expect(await applyCommand(handler, "not a session id", { verb: "close" }, logger)).toMatchObject({
      ok: false,
      error: { code: "invalid_params" },
    });
    expect(logger.warnings).toHaveLength(2);
    expect(applied).toEqual([]);
    expect(
      await applyCommand(handler, "s-1", { verb: "close", params: { reason: "error" } }, logger),
    ).toEqual({
      ok: true,
      value: { ok: "yes" },
    });
  });

  it("a table of typed handlers receives each verb's parsed params", async () => {
    const seen: string[] = [];
    const handlers: SessionCommandHandlers = {
      cancelTurn: (sessionId, p) => (seen.push(`cancelTurn ${p.turnId}`), { sessionId, cancelled: true }),
      cancelOutput: (sessionId) => (seen.push("cancelOutput"), { sessionId, cancelled: false }),
      close: (sessionId, p) => (seen.push(`close ${p.reason}`), { sessionId, closed: true }),
      join: () => {
        throw new TalkError("invalid_join_token");
      },
      leave: (_sessionId, p) => (seen.push(`leave ${p.peer}`), { left: true }),
    };
    const handler = sessionCommandHandler(handlers);
    const logger = recordingLogger();
    expect(
      await applyCommand(handler, "s-1", { verb: "cancelTurn", params: { turnId: "t1" } }, logger),
    ).toEqual({
      ok: true,
      value: { sessionId: "s-1", cancelled: true },
    });
    expect(
      await applyCommand(
        handler,
        "s-1",
        { verb: "join", params: { joinToken: "x", afterSeq: 0, peer: "w/c" } },
        logger,
      ),
    ).toMatchObject({ ok: false, error: { code: "invalid_join_token" } });
    await applyCommand(handler, "s-1", { verb: "close", params: { reason: "owner_lost" } }, logger);
    await applyCommand(handler, "s-1", { verb: "leave", params: { peer: "w/c" } }, logger);
    expect(seen).toEqual(["cancelTurn t1", "close owner_lost", "leave w/c"]);
  });
});
