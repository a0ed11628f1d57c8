import { describe, expect, it } from "vitest";
import type { AgentConsultRequest, AgentDelta, AgentProvider } from "../../core/index.js";
import { PreparedAnswer } from "./prepared-answer.js";

/** An agent whose consults stream what the test feeds them, recording each request and its abort. */
function scriptedAgent() {
  const consults: { request: AgentConsultRequest; push(d: AgentDelta): void; end(err?: unknown): void }[] =
    [];
  const agent: AgentProvider = {
    id: "scripted",
    kind: "agent",
    label: "scripted",
    capabilities: {},
    health: () => Promise.resolve({ ok: true }),
    consult(request) {
      const queue: AgentDelta[] = [];
      let ended: { err?: unknown } | undefined;
      let wake: (() => void) | undefined;
      consults.push({
        request,
        push: (d) => (queue.push(d), wake?.()),
        end: (err) => ((ended = { err }), wake?.()),
      });
      return (async function* () {
        for (;;) {
          if (queue.length > 0) {
            yield queue.shift()!;
            continue;
          }
          if (ended) {
            if (ended.err !== undefined) throw ended.err;
            return;
          }
          if (request.signal.aborted) throw request.signal.reason;
          await new Promise<void>((r) => {
            wake = r;
            request.signal.addEventListener("abort", () => r(), { once: true });
          });
        }
      })();
    },
  } as AgentProvider;
  return { agent, consults };
}

const words = (text: string) => ({
  sessionId: "s1",
  turnId: "t1",
  messages: [
    { role: "system" as const, content: "You are helpful." },
    { role: "user" as const, content: text },
  ],
  tools: [],
});

async function collect(stream: AsyncIterable<AgentDelta>): Promise<string> {
  let text = "";
  for await (const d of stream) if (d.type === "text") text += d.text;
  return text;
}

const tick = () => new Promise((r) => setImmediate(r));

describe("PreparedAnswer", () => {
  it("the turn's answer takes the consult prepared for the same words: buffered deltas, then the rest live", async () => {
    const { agent, consults } = scriptedAgent();
    const prepared = new PreparedAnswer();
    const turn = new AbortController();
    prepared.prepare(agent, words("I need a taxi."), turn.signal);
    await tick();
    expect(consults).toHaveLength(1);
    consults[0]!.push({ type: "text", text: "Sure, " });
    await tick();
    const taker = new AbortController();
    const answer = collect(
      prepared.agent(agent).consult({ ...words("I need a taxi."), signal: taker.signal }),
    );
    consults[0]!.push({ type: "text", text: "where to?" });
    consults[0]!.push({ type: "done" });
    consults[0]!.end();
    expect(await answer).toBe("Sure, where to?");
    expect(consults).toHaveLength(1);
    expect(prepared.stats).toEqual({ prepared: 1, used: 1, discarded: {} });
  });

  it("other words: the prepared consult is aborted and the agent asked afresh", async () => {
    const { agent, consults } = scriptedAgent();
    const prepared = new PreparedAnswer();
    prepared.prepare(agent, words("I need a taxi."), new AbortController().signal);
    await tick();
    const stream = prepared
      .agent(agent)
      .consult({ ...words("I need a taxi to the airport."), signal: new AbortController().signal });
    expect(consults).toHaveLength(2);
    expect(consults[0]!.request.signal.aborted).toBe(true);
    expect(consults[1]!.request.messages.at(-1)!.content).toBe("I need a taxi to the airport.");
    consults[1]!.push({ type: "text", text: "To the airport." });
    consults[1]!.end();
    expect(await collect(stream)).toBe("To the airport.");
    expect(prepared.stats).toEqual({ prepared: 1, used: 0, discarded: { words_changed: 1 } });
  });

  it("new words prepare anew (the old consult aborted); the same words again keep the consult", async () => {
    const { agent, consults } = scriptedAgent();
    const prepared = new PreparedAnswer();
    const turn = new AbortController();
    prepared.prepare(agent, words("I need a taxi."), turn.signal);
    prepared.prepare(agent, words("I need a taxi."), turn.signal);
    expect(consults).toHaveLength(1);
    prepared.prepare(agent, words("I need a taxi to the airport."), turn.signal);
    expect(consults).toHaveLength(2);
    expect(consults[0]!.request.signal.aborted).toBe(true);
    expect(consults[1]!.request.signal.aborted).toBe(false);
  });

  it("a cancelled turn, a consult that failed, or another turn: nothing prepared is used", async () => {
    const { agent, consults } = scriptedAgent();
    const prepared = new PreparedAnswer();
    const turn = new AbortController();
    prepared.prepare(agent, words("I need a taxi."), turn.signal);
    turn.abort();
    expect(consults[0]!.request.signal.aborted).toBe(true);
    prepared.prepare(agent, words("I need a taxi."), turn.signal);
    expect(consults).toHaveLength(1); // a cancelled turn prepares nothing

    prepared.prepare(agent, words("Hello."), new AbortController().signal);
    consults[1]!.end(new Error("502 from the model"));
    await tick();
    prepared.agent(agent).consult({ ...words("Hello."), signal: new AbortController().signal });
    expect(consults).toHaveLength(3); // asked again, as the answer would have been

    prepared.prepare(agent, words("Hello."), new AbortController().signal);
    prepared.agent(agent).consult({ ...words("Hello."), turnId: "t2", signal: new AbortController().signal });
    expect(consults).toHaveLength(5);
    expect(consults[3]!.request.signal.aborted).toBe(true);
    expect(prepared.stats).toEqual({
      prepared: 3,
      used: 0,
      discarded: { turn_over: 1, failed: 1, superseded: 1 },
    });
  });

  it("the taker's cancellation (a barge-in) closes the prepared consult; close() aborts what is prepared", async () => {
    const { agent, consults } = scriptedAgent();
    const prepared = new PreparedAnswer();
    prepared.prepare(agent, words("I need a taxi."), new AbortController().signal);
    const taker = new AbortController();
    const answer = collect(
      prepared.agent(agent).consult({ ...words("I need a taxi."), signal: taker.signal }),
    );
    await tick();
    taker.abort();
    await expect(answer).rejects.toMatchObject({ code: "cancelled" });
    expect(consults[0]!.request.signal.aborted).toBe(true);

    prepared.prepare(agent, words("Hello."), new AbortController().signal);
    prepared.close();
    expect(consults[1]!.request.signal.aborted).toBe(true);
    prepared.prepare(agent, words("Hello again."), new AbortController().signal);
    expect(consults).toHaveLength(2);
  });
});
