import { appendFileSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime, NOOP_LOGGER, type TalkRuntime } from "../core/index.js";
import { UsageLedger } from "./usage-ledger.js";
import { usageCsv } from "./usage-record.js";

let runtime: TalkRuntime | undefined;
let ledger: UsageLedger | undefined;
afterEach(async () => {
  await ledger?.close();
  await runtime?.close();
});

const prices = { prices: {}, currency: "USD" };

describe("UsageLedger", () => {
  it("writes one line per closed session to the day's file and reads it back; an open session is not written", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "talkgate-ledger-")), "usage");
    runtime = createTalkRuntime({});
    ledger = new UsageLedger({ runtime, dir, workerId: "w/1", prices, logger: NOOP_LOGGER });
    const done = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const open = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const turn = done.startTurn();
    done.emit({ type: "tool.call", turnId: turn.id, payload: { name: "get_time", argumentsJson: "{}" } });
    await done.close("completed");
    await ledger.flushed();
    const today = new Date().toISOString().slice(0, 10);
    expect(readdirSync(dir)).toEqual([`${today}.w_1.jsonl`]);
    const records = await ledger.list(today, today);
    expect(records.map((r) => r.sessionId)).toEqual([done.id]);
    expect(records[0]).toMatchObject({ workerId: "w/1", turns: 1, toolCalls: 1, closeReason: "completed" });
    expect(records.some((r) => r.sessionId === open.id)).toBe(false);
    expect(await ledger.list("2000-01-01", "2000-01-02")).toEqual([]);
  });

  it("a line torn by a crash mid-write is skipped; the lines before it stand", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "talkgate-ledger-")), "usage");
    runtime = createTalkRuntime({});
    ledger = new UsageLedger({ runtime, dir, workerId: "w1", prices, logger: NOOP_LOGGER });
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    await session.close("completed");
    await ledger.flushed();
    const today = new Date().toISOString().slice(0, 10);
    appendFileSync(join(dir, `${today}.w1.jsonl`), '{"sessionId":"torn","dura');
    expect((await ledger.list(today, today)).map((r) => r.sessionId)).toEqual([session.id]);
  });

  it("a call's line goes in its record: the leg's echo report (usage.metrics echo), its resumed answers by why, its prepared answers", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "talkgate-ledger-")), "usage");
    runtime = createTalkRuntime({});
    ledger = new UsageLedger({ runtime, dir, workerId: "w1", prices, logger: NOOP_LOGGER });
    const session = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const turn = session.startTurn();
    const resumed = (reason: "no_words" | "backchannel"): void => {
      session.emit({ type: "output.audio.resumed", turnId: turn.id, payload: { reason, fromMs: 400 } });
    };
    resumed("no_words");
    resumed("no_words");
    resumed("backchannel");
    const echo = {
      frames: 1500,
      suppressedFrames: 900,
      doubleTalkFrames: 12,
      echoReturnLossDb: 6.2,
      delayMs: 120,
    };
    session.emit({ type: "usage.metrics", payload: { echo } });
    // A malformed report is not taken for one (nor charged to a provider).
    session.emit({ type: "usage.metrics", payload: { echo: { frames: -1 } } });
    // The pipeline's answers prepared ahead of the end of turn, the discarded ones' tokens never reported.
    const preparedAnswers = { prepared: 5, used: 3, discarded: 2 };
    session.emit({ type: "usage.metrics", payload: { kind: "agent", preparedAnswers } });
    session.emit({ type: "usage.metrics", payload: { kind: "agent", preparedAnswers: { prepared: "x" } } });
    await session.close("completed");
    await ledger.flushed();
    const today = new Date().toISOString().slice(0, 10);
    const [record] = await ledger.list(today, today);
    expect(record).toMatchObject({
      resumed: { noWords: 2, backchannel: 1 },
      echo,
      preparedAnswers,
      providers: {},
    });
    const [, row] = usageCsv([record!]).trim().split("\r\n");
    expect(row).toContain(",2,1,6.2,900,12,5,2,completed,");
  });

  it("CSV quotes cells with commas and quotes", () => {
    const csv = usageCsv([
      {
        sessionId: "s1",
        workerId: "w1",
        surface: "phone",
        mode: "realtime",
        startedAt: "2026-01-01T00:00:00.000Z",
        endedAt: "2026-01-01T00:01:00.000Z",
        durationSeconds: 60,
        audioInSeconds: 50,
        audioOutSeconds: 20,
        sttSeconds: 0,
        ttsCharacters: 0,
        inputTokens: 1,
        outputTokens: 2,
        providers: {},
        turns: 2,
        toolCalls: 0,
        bargeIns: 1,
        resumed: { noWords: 3, backchannel: 0 },
        echo: { frames: 100, suppressedFrames: 40, doubleTalkFrames: 2, echoReturnLossDb: 9.5 },
        closeReason: 'said "bye", left',
        cost: { total: 0.5, currency: "USD" },
      },
    ]);
    const [header, row] = csv.trim().split("\r\n");
    expect(header?.split(",").length).toBe(28);
    expect(row).toBe(
      's1,w1,phone,,,realtime,2026-01-01T00:00:00.000Z,2026-01-01T00:01:00.000Z,60,50,20,0,0,1,2,2,0,1,3,0,9.5,40,2,,,"said ""bye"", left",0.5,USD',
    );
  });
});
