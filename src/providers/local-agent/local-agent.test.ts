import { describe, expect, it } from "vitest";
import type { AgentDelta, AgentMessage } from "../../core/provider-types.js";
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
