import { describe, expect, it } from "vitest";
import type { AgentDelta, AgentMessage } from "../../core/provider-types.js";
import { parseToolArguments, ToolRegistry } from "../../core/tool-registry.js";
import { CallControlRegistry } from "../../core/tools/call-control.js";
import { createEndCallTool, createTransferCallTool } from "../../core/tools/call-tools.js";
import { createLocalAgent, LOCAL_AGENT_HELP, splitIntoDeltas } from "./local-agent.js";

const NOON_UTC = new Date("2025-03-14T12:05:00Z");

async function consult(
  messages: AgentMessage[],
  signal = new AbortController().signal,
): Promise<AgentDelta[]> {
  const agent = createLocalAgent({ timeZone: "UTC", now: () => NOON_UTC });
  const deltas: AgentDelta[] = [];
  for await (const d of agent.consult({ sessionId: "s", turnId: "t", messages, signal })) deltas.push(d);
  return deltas;
}

function textOf(deltas: AgentDelta[]): string {
  return deltas.map((d) => (d.type === "text" ? d.text : "")).join("");
}

describe("local agent", () => {
  it("tells the time in the configured zone", async () => {
    expect(textOf(await consult([{ role: "user", content: "What time is it?" }]))).toBe("It is 12:05 PM.");
  });

  it("tells the date", async () => {
    expect(textOf(await consult([{ role: "user", content: "what's the date today" }]))).toBe(
      "Today is Friday, March 14, 2025.",
    );
  });

  it("answers help with what it can do", async () => {
    expect(textOf(await consult([{ role: "user", content: "help" }]))).toBe(LOCAL_AGENT_HELP);
  });

  it("echoes anything else, answering only the last user message", async () => {
    const deltas = await consult([
      { role: "system", content: "You are a helpful assistant. What time is it?" },
      { role: "user", content: "what time is it" },
      { role: "assistant", content: "It is noon." },
      { role: "user", content: "go forward ten meters" },
    ]);
    expect(textOf(deltas)).toBe("You said: go forward ten meters");
  });

  it("streams several text deltas and ends with done", async () => {
    const deltas = await consult([{ role: "user", content: "the quick brown fox jumps over the lazy dog" }]);
    expect(deltas.filter((d) => d.type === "text").length).toBeGreaterThan(1);
    expect(deltas.at(-1)).toEqual({ type: "done", finishReason: "stop" });
  });

  it("says it did not hear anything when there is no user text", async () => {
    expect(textOf(await consult([{ role: "user", content: "  " }]))).toMatch(/did not catch/);
  });

  it("stops with cancelled when aborted mid-answer", async () => {
    const controller = new AbortController();
    const agent = createLocalAgent();
    const seen: AgentDelta[] = [];
    const run = (async () => {
      for await (const d of agent.consult({
        sessionId: "s",
        turnId: "t",
        messages: [{ role: "user", content: "one two three four five six seven eight" }],
        signal: controller.signal,
      })) {
        seen.push(d);
        controller.abort();
      }
    })();
    await expect(run).rejects.toMatchObject({ code: "cancelled" });
    expect(seen).toHaveLength(1);
  });

  it("rejects an invalid time zone at construction", () => {
    expect(() => createLocalAgent({ timeZone: "Mars/Olympus" })).toThrowError(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("splits text into pieces that concatenate back to it", () => {
    const text = "You said: a b c d e f g";
    expect(splitIntoDeltas(text).join("")).toBe(text);
    expect(splitIntoDeltas("word")).toEqual(["word"]);
  });
});

describe("local agent: call tools by rule", () => {
  const calls = new CallControlRegistry();
  const registry = new ToolRegistry()
    .register(createEndCallTool(calls))
    .register(
      createTransferCallTool({ calls, targets: { "front desk": "+15550001", billing: "+15550002" } }),
    );
  const tools = registry.toRealtimeTools();
  const agent = createLocalAgent({ timeZone: "UTC", now: () => NOON_UTC });
  const user = (content: string): AgentMessage[] => [{ role: "user", content }];

  it("a goodbye says goodbye and calls end_call", async () => {
    const deltas: AgentDelta[] = [];
    for await (const d of agent.consult({
      sessionId: "s",
      turnId: "t",
      messages: user("OK, goodbye then."),
      tools,
      signal: new AbortController().signal,
    }))
      deltas.push(d);
    expect(textOf(deltas)).toBe("Goodbye!");
    const call = deltas.find((d) => d.type === "tool_call");
    expect(call).toMatchObject({ name: "end_call", callId: expect.stringMatching(/^local-/) });
    expect(deltas.at(-1)).toEqual({ type: "done", finishReason: "tool_calls" });
    // The arguments fit the tool's own schema.
    expect(() =>
      parseToolArguments(registry.get("end_call")!, (call as { argumentsJson: string }).argumentsJson),
    ).not.toThrow();
  });

  it("asking for an operator, an agent or a human transfers to the first configured target", () => {
    for (const said of ["Can I talk to an operator?", "agent please", "I want a human"]) {
      const plan = agent.plan(user(said), tools);
      expect(plan.text).toBe("Let me transfer you.");
      expect(plan.toolCalls).toHaveLength(1);
      expect(plan.toolCalls[0]!.name).toBe("transfer_call");
      expect(JSON.parse(plan.toolCalls[0]!.argumentsJson)).toMatchObject({ target: "front desk" });
    }
  });

  it("without targets it says it cannot transfer; without tools offered it answers as before", () => {
    const none = new ToolRegistry()
      .register(createTransferCallTool({ calls, targets: {} }))
      .toRealtimeTools();
    expect(agent.plan(user("operator"), none)).toEqual({
      text: "Sorry, I cannot transfer calls here.",
      toolCalls: [],
    });
    expect(agent.plan(user("goodbye"), [])).toEqual({ text: "You said: goodbye", toolCalls: [] });
  });

  it("after a tool's result: nothing more when it worked, an apology when it failed", () => {
    const asked: AgentMessage = {
      role: "assistant",
      content: "Let me transfer you.",
      toolCalls: [{ callId: "c1", name: "transfer_call", argumentsJson: "{}" }],
    };
    const ok = agent.plan(
      [...user("operator"), asked, { role: "tool", toolCallId: "c1", content: '{"ok":true}' }],
      tools,
    );
    expect(ok).toEqual({ text: "", toolCalls: [] });
    const failed = agent.plan(
      [...user("operator"), asked, { role: "tool", toolCallId: "c1", content: '{"error":"provider_error"}' }],
      tools,
    );
    expect(failed.text).toMatch(/could not transfer you/);
    expect(failed.toolCalls).toEqual([]);
  });
});
