import { describe, expect, it } from "vitest";
import { TalkError, isTalkError, type TalkLogger } from "../core/index.js";
import { runCarrierAction, type CarrierActionContext } from "./carrier-actions.js";

const silent = { info() {}, warn() {}, error() {}, debug() {} } as unknown as TalkLogger;

function context(): CarrierActionContext & { apologies: number } {
  const ctx = {
    callSid: "CA1",
    logger: silent,
    apologies: 0,
    apologize: async () => {
      ctx.apologies++;
    },
  };
  return ctx;
}

/** An action failing with `errors` in turn, then succeeding; records the request ids it was given. */
function scripted(errors: TalkError[], idempotent: boolean, signal = new AbortController().signal) {
  const ids: string[] = [];
  return {
    ids,
    action: {
      name: "test",
      idempotent,
      signal,
      run: async (requestId: string) => {
        ids.push(requestId);
        const error = errors.shift();
        if (error) throw error;
      },
    },
  };
}

const outage = (): TalkError => new TalkError("provider_unavailable", "503");

describe("runCarrierAction", () => {
  it("retries an outage of a repeatable action with the same request id; no apology when it then works", async () => {
    const ctx = context();
    const { ids, action } = scripted([outage()], true);
    await runCarrierAction(ctx, action);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(ids[1]);
    expect(ctx.apologies).toBe(0);
  });

  it("reports an outage of an action that cannot be repeated, and a refusal, at once, with the apology", async () => {
    for (const [error, idempotent] of [
      [outage(), false],
      [new TalkError("provider_error", "refused"), true],
    ] as const) {
      const ctx = context();
      const { ids, action } = scripted([error], idempotent);
      const failed = await runCarrierAction(ctx, action).catch((e: unknown) => e);
      expect(isTalkError(failed) && failed.code).toBe(error.code);
      expect([ids.length, ctx.apologies]).toEqual([1, 1]);
    }
  });

  it("a cancelled action is not apologised for", async () => {
    const ctx = context();
    const abort = new AbortController();
    abort.abort();
    const { action } = scripted([new TalkError("cancelled", "cancelled")], true, abort.signal);
    const failed = await runCarrierAction(ctx, action).catch((e: unknown) => e);
    expect(isTalkError(failed) && failed.code).toBe("cancelled");
    expect(ctx.apologies).toBe(0);
  });
});
