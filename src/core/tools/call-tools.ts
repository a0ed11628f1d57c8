import { cancelledError } from "../abortable.js";
import { TalkError } from "../errors.js";
import type { ToolContext, ToolDefinition } from "../tool-registry.js";
import type { CallControl, CallControlRegistry } from "./call-control.js";

/**
 * Call tools (seed 003's first set): end_call, send_dtmf, transfer_call. They
 * act through the CallControl the session's surface registered (a phone call);
 * a session without one gets a clear tool error. They have side effects, so
 * they run under the turn's signal, hand it to the surface, and report
 * cancellation (a cancelled call rejects `cancelled` -> tool.cancelled).
 */

function controlOf(calls: CallControlRegistry, ctx: ToolContext, tool: string): CallControl {
  const control = calls.get(ctx.sessionId);
  if (!control) {
    throw new TalkError(
      "capability_unsupported",
      `${tool}: this session is not a phone call, so there is no call to control.`,
      {
        details: { tool },
      },
    );
  }
  return control;
}

async function act(ctx: ToolContext, run: () => Promise<void>): Promise<void> {
  if (ctx.signal.aborted) throw cancelledError(ctx.signal);
  await run();
  // Re-checked after the await: a surface that ignored the abort still reports cancellation, not success.
  if (ctx.signal.aborted) throw cancelledError(ctx.signal);
}

export function createEndCallTool(calls: CallControlRegistry): ToolDefinition {
  return {
    name: "end_call",
    description:
      "Hang up the phone call, after what has already been said has been heard. Say goodbye first.",
    parameters: {
      type: "object",
      properties: { reason: { type: "string", description: "Why the call ends, for the log." } },
      additionalProperties: false,
    },
    sideEffects: true,
    handler: async (args, ctx) => {
      const control = controlOf(calls, ctx, "end_call");
      const reason = typeof args["reason"] === "string" ? args["reason"].slice(0, 200) : undefined;
      await act(ctx, () =>
        control.hangUp({ afterPlayback: true, signal: ctx.signal, ...(reason ? { reason } : {}) }),
      );
      return JSON.stringify({ ok: true, ended: true });
    },
  };
}

const DTMF = /^[0-9*#wW]{1,32}$/;

export function createSendDtmfTool(calls: CallControlRegistry): ToolDefinition {
  return {
    name: "send_dtmf",
    description: "Press keys on the phone keypad in this call (digits 0-9, * and #; w pauses half a second).",
    parameters: {
      type: "object",
      properties: { digits: { type: "string", description: 'Keys to press, e.g. "1" or "1234#".' } },
      required: ["digits"],
      additionalProperties: false,
    },
    sideEffects: true,
    handler: async (args, ctx) => {
      const digits = String(args["digits"]);
      if (!DTMF.test(digits))
        throw new TalkError("invalid_params", "send_dtmf: digits must be 1-32 of 0-9, *, # and w.");
      const control = controlOf(calls, ctx, "send_dtmf");
      await act(ctx, () => control.sendDtmf(digits.toLowerCase(), ctx.signal));
      return JSON.stringify({ ok: true, sent: digits });
    },
  };
}

export interface TransferCallToolOptions {
  calls: CallControlRegistry;
  /**
   * Where calls may be transferred, by name (agent.transferTargets), e.g.
   * { "front desk": "+15551230000" }. The model picks a name; the number
   * always comes from here, never from the model.
   */
  targets: Readonly<Record<string, string>>;
}

export function createTransferCallTool(options: TransferCallToolOptions): ToolDefinition {
  const names = Object.keys(options.targets);
  for (const [name, destination] of Object.entries(options.targets)) {
    if (typeof destination !== "string" || destination.trim() === "") {
      throw new TalkError("config_invalid", `transfer_call: target "${name}" needs a destination.`);
    }
  }
  return {
    name: "transfer_call",
    description:
      names.length > 0
        ? `Transfer the phone call to one of: ${names.join(", ")}. Tell the caller before transferring.`
        : "Transfer the phone call (no destination is configured, so this will fail).",
    parameters: {
      type: "object",
      properties: {
        target: {
          type: "string",
          description: "Name of the destination.",
          ...(names.length > 0 ? { enum: names } : {}),
        },
        briefing: {
          type: "string",
          description:
            "One or two sentences for the person who picks up, spoken before the caller is connected: who is calling and why.",
        },
      },
      required: ["target"],
      additionalProperties: false,
    },
    sideEffects: true,
    handler: async (args, ctx) => {
      const target = String(args["target"]);
      const destination = Object.hasOwn(options.targets, target) ? options.targets[target] : undefined;
      if (destination === undefined) {
        throw new TalkError(
          "invalid_params",
          names.length > 0
            ? `transfer_call: "${target}" is not one of ${names.join(", ")}.`
            : "transfer_call: no transfer destination is configured.",
          {
            details: { target },
          },
        );
      }
      const control = controlOf(options.calls, ctx, "transfer_call");
      const briefing = typeof args["briefing"] === "string" ? args["briefing"].trim().slice(0, 500) : "";
      await act(ctx, () => control.transfer(destination, ctx.signal, briefing ? { briefing } : {}));
      return JSON.stringify({ ok: true, transferredTo: target });
    },
  };
}

export interface CollectDigitsToolOptions {
  calls: CallControlRegistry;
  /** Defaults of the tool's arguments (agent.collectDigits). */
  defaults: { timeoutMs: number; cancelOnSpeech: boolean };
}

/**
 * collect_digits: the agent asks for keypad input (an account number, a menu
 * choice) and gets the digits typed, instead of reading them one by one from
 * the conversation.
 */
export function createCollectDigitsTool(options: CollectDigitsToolOptions): ToolDefinition {
  return {
    name: "collect_digits",
    description:
      "Wait for the caller to type digits on the phone keypad (an account number, a menu choice). Ask the caller first; returns the digits typed.",
    parameters: {
      type: "object",
      properties: {
        count: { type: "integer", minimum: 1, maximum: 32, description: "Stop after this many digits." },
        terminator: {
          type: "string",
          enum: ["#", "*"],
          description: "Stop when the caller presses this key.",
        },
        timeoutMs: {
          type: "integer",
          minimum: 1000,
          maximum: 60_000,
          description: "Give up this long after the last key, ms.",
        },
      },
      additionalProperties: false,
    },
    sideEffects: false,
    handler: async (args, ctx) => {
      const count = args["count"];
      const terminator = args["terminator"];
      const timeoutMs = args["timeoutMs"] ?? options.defaults.timeoutMs;
      if (
        count !== undefined &&
        (!Number.isInteger(count) || (count as number) < 1 || (count as number) > 32)
      )
        throw new TalkError("invalid_params", "collect_digits: count must be an integer 1-32.");
      if (terminator !== undefined && terminator !== "#" && terminator !== "*")
        throw new TalkError("invalid_params", 'collect_digits: terminator must be "#" or "*".');
      if (!Number.isInteger(timeoutMs) || (timeoutMs as number) < 1000 || (timeoutMs as number) > 60_000)
        throw new TalkError("invalid_params", "collect_digits: timeoutMs must be an integer 1000-60000.");
      if (count === undefined && terminator === undefined)
        throw new TalkError("invalid_params", "collect_digits: give a count, a terminator, or both.");
      const control = controlOf(options.calls, ctx, "collect_digits");
      if (ctx.signal.aborted) throw cancelledError(ctx.signal);
      const result = await control.collectDigits(
        {
          ...(count !== undefined ? { count: count as number } : {}),
          ...(terminator !== undefined ? { terminator: terminator as "#" | "*" } : {}),
          timeoutMs: timeoutMs as number,
          cancelOnSpeech: options.defaults.cancelOnSpeech,
          turnId: ctx.turnId,
        },
        ctx.signal,
      );
      if (ctx.signal.aborted) throw cancelledError(ctx.signal);
      return JSON.stringify({
        ok: true,
        digits: result.digits,
        complete: result.reason !== "timeout" && result.reason !== "speech",
        endedBy: result.reason,
      });
    },
  };
}
