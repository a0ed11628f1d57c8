import { afterEach, describe, expect, it } from "vitest";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { SlowAgentProvider } from "../support/gateway-slow-providers.js";
import {
  SPEECH_FORMAT,
  appendPcm,
  recordEvents,
  rejectionOf,
  speechPcm,
  startGateway,
} from "../support/gateway-harness.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;

function seqs(events: TalkEvent[]): number[] {
  return events.map((e) => e.seq);
}

describe("talk.session.create", () => {
  it("creates each Gateway-owned combination of the matrix and returns a join token once", async () => {
    h = await startGateway();
    // direct-tools needs the direct-tools scope (gateway-direct-tools.test.ts); it implies write.
    const client = await h.connect({ as: "surface" });
    for (const params of [
      { mode: "stt-tts", transport: "managed-room", brain: "agent-consult" },
      { mode: "stt-tts", transport: "managed-room", brain: "direct-tools" },
      { mode: "transcription", transport: "gateway-relay" },
    ] as const) {
      const created = await client.request("talk.session.create", params);
      expect(created).toMatchObject({
        mode: params.mode,
        transport: params.transport,
        joinToken: expect.any(String),
      });
      expect(h.runtime.getSession(created.sessionId)?.owner).toBe("gateway");
    }
    const transcription = await client.request("talk.session.create", {
      mode: "transcription",
      transport: "gateway-relay",
    });
    expect(transcription.brain).toBe("none");
  });

  it("rejects client-owned transports, pointing to talk.client.create", async () => {
    h = await startGateway();
    const client = await h.connect();
    for (const transport of ["webrtc", "provider-websocket"] as const) {
      const err = await rejectionOf(client.request("talk.session.create", { mode: "realtime", transport }));
      expect(err.code).toBe("use_talk_client_create");
      expect(err.details).toMatchObject({ method: "talk.client.create" });
    }
    expect(h.runtime.sessionCount).toBe(0);
  });

  it("rejects combinations outside the creation matrix", async () => {
    h = await startGateway();
    const client = await h.connect();
    const err = await rejectionOf(
      client.request("talk.session.create", {
        mode: "transcription",
        transport: "managed-room",
        brain: "agent-consult",
      }),
    );
    expect(err.code).toBe("unsupported_combination");
  });

  it("the owner receives the session's events in seq order, starting with session.created", async () => {
    h = await startGateway();
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await rec.next((e) => e.type === "capture.started");
    expect(rec.events[0]).toMatchObject({ type: "session.created", sessionId, seq: 1 });
    expect(seqs(rec.events)).toEqual(rec.events.map((_, i) => i + 1));
    expect(rec.events.find((e) => e.type === "turn.started")?.turnId).toBe(turnId);
  });

  it("a connection may own at most maxSessionsPerConnection sessions", async () => {
    h = await startGateway({ options: { maxSessionsPerConnection: 1 } });
    const client = await h.connect();
    await client.request("talk.session.create", ROOM);
    expect((await rejectionOf(client.request("talk.session.create", ROOM))).code).toBe("session_limit");
  });
});

describe("turn verbs", () => {
  it("a spoken turn is transcribed, answered by the agent and spoken as talk.audio to the owner", async () => {
    h = await startGateway();
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await appendPcm(client, sessionId, await speechPcm("What time is it?"));
    await client.request("talk.session.endTurn", { sessionId, turnId });
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === turnId);
    const heard = rec.events.find((e) => e.type === "transcript.done")?.payload as { text: string };
    expect(heard.text.length).toBeGreaterThan(0);
    expect(rec.audio.length).toBeGreaterThan(0);
    expect(rec.audio.every((a) => a.sessionId === sessionId && a.turnId === turnId)).toBe(true);
    // Audio rides only in talk.audio frames, never inside a talk.event payload.
    expect(JSON.stringify(rec.events)).not.toContain(rec.audio[0]?.audioBase64.slice(0, 64));
  });

  it("endTurn with a stale turn id is stale_turn and leaves the active turn alone", async () => {
    h = await startGateway();
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    const err = await rejectionOf(
      client.request("talk.session.endTurn", { sessionId, turnId: "not-the-turn" }),
    );
    expect(err.code).toBe("stale_turn");
    expect(h.runtime.getSession(sessionId)?.activeTurn?.id).toBe(turnId);
    expect((await rejectionOf(client.request("talk.session.startTurn", { sessionId }))).code).toBe(
      "turn_already_active",
    );
  });

  it("cancelTurn aborts the agent's work: the slow agent sees its AbortSignal and one turn.cancelled follows", async () => {
    const agent = new SlowAgentProvider();
    h = await startGateway({ agent });
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await appendPcm(client, sessionId, await speechPcm("Tell me a story."));
    await client.request("talk.session.endTurn", { sessionId, turnId });
    await agent.started;
    expect(agent.aborted).toHaveLength(0);
    const { cancelled } = await client.request("talk.session.cancelTurn", {
      sessionId,
      turnId,
      reason: "client_request",
    });
    expect(cancelled).toBe(true);
    await expect.poll(() => agent.aborted.length).toBe(1);
    await rec.next((e) => e.type === "turn.cancelled");
    expect(rec.events.filter((e) => e.type === "turn.cancelled")).toHaveLength(1);
    expect(rec.events.some((e) => e.type === "output.audio.started")).toBe(false);
  });

  it("cancelOutput stops the answer without cancelling the turn, and the slow agent sees its AbortSignal", async () => {
    const agent = new SlowAgentProvider();
    h = await startGateway({ agent });
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await appendPcm(client, sessionId, await speechPcm("Tell me a story."));
    await client.request("talk.session.endTurn", { sessionId, turnId });
    await agent.started;
    expect((await client.request("talk.session.cancelOutput", { sessionId, turnId })).cancelled).toBe(true);
    await expect.poll(() => agent.aborted.length).toBe(1);
    await rec.next((e) => e.type === "output.audio.cancelled");
    expect(rec.events.some((e) => e.type === "turn.cancelled")).toBe(false);
    expect((await client.request("talk.session.cancelOutput", { sessionId, turnId })).cancelled).toBe(false);
  });

  it("appendAudio refuses bad base64 with invalid_params and oversized frames with payload_too_large", async () => {
    h = await startGateway({ options: { maxAudioBytesPerFrame: 1024 } });
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", ROOM);
    await client.request("talk.session.startTurn", { sessionId });
    for (const audioBase64 of ["@@@@", "AAA", "AA==AA==", "A A="]) {
      const err = await rejectionOf(client.request("talk.session.appendAudio", { sessionId, audioBase64 }));
      expect(err.code, audioBase64).toBe("invalid_params");
    }
    const big = Buffer.alloc(2048).toString("base64");
    expect(
      (await rejectionOf(client.request("talk.session.appendAudio", { sessionId, audioBase64: big }))).code,
    ).toBe("payload_too_large");
    await expect(
      client.request("talk.session.appendAudio", {
        sessionId,
        audioBase64: Buffer.alloc(1024).toString("base64"),
      }),
    ).resolves.toEqual({ sessionId, bytes: 1024 });
  });

  it("talk.session.create refuses a playbackReports that is not a boolean, naming it, and takes true", async () => {
    h = await startGateway();
    const client = await h.connect();
    for (const playbackReports of ["yes", 1, null, {}]) {
      const err = await rejectionOf(
        client.request("talk.session.create", { ...ROOM, playbackReports } as never),
      );
      expect(err.code, JSON.stringify(playbackReports)).toBe("invalid_params");
      expect(JSON.stringify(err.details)).toContain("playbackReports");
    }
    const { sessionId } = await client.request("talk.session.create", { ...ROOM, playbackReports: true });
    expect(sessionId).toEqual(expect.any(String));
  });

  it("submitToolResult for a call nobody waits on is tool_not_found", async () => {
    h = await startGateway();
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const err = await rejectionOf(
      client.request("talk.session.submitToolResult", { sessionId, callId: "nope", output: "{}" }),
    );
    expect(err.code).toBe("tool_not_found");
  });

  it("session verbs from a connection that does not own the session are not_session_owner", async () => {
    h = await startGateway();
    const owner = await h.connect();
    const other = await h.connect();
    const { sessionId } = await owner.request("talk.session.create", ROOM);
    for (const [method, params] of [
      ["talk.session.startTurn", { sessionId }],
      ["talk.session.appendAudio", { sessionId, audioBase64: "AAAA" }],
      ["talk.session.cancelTurn", { sessionId }],
      ["talk.session.close", { sessionId }],
    ] as const) {
      expect((await rejectionOf(other.requestUntyped(method, params))).code, method).toBe(
        "not_session_owner",
      );
    }
    expect((await rejectionOf(other.request("talk.session.startTurn", { sessionId: "missing" }))).code).toBe(
      "session_not_found",
    );
  });

  it("close emits one session.closed, revokes the join token, and later verbs are session_closed", async () => {
    h = await startGateway();
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId, joinToken } = await client.request("talk.session.create", ROOM);
    expect(await client.request("talk.session.close", { sessionId })).toEqual({ sessionId, closed: true });
    await rec.next((e) => e.type === "session.closed");
    expect(rec.events.filter((e) => e.type === "session.closed")).toHaveLength(1);
    expect((await rejectionOf(client.request("talk.session.startTurn", { sessionId }))).code).toBe(
      "session_closed",
    );
    const other = await h.connect();
    expect((await rejectionOf(other.request("talk.session.join", { sessionId, joinToken }))).code).toBe(
      "session_closed",
    );
  });
});

describe("talk.session.join: replacement, reconnect and replay", () => {
  it("validates the session id and join token, never returning token material", async () => {
    h = await startGateway();
    const owner = await h.connect();
    const joiner = await h.connect();
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    expect(
      (await rejectionOf(joiner.request("talk.session.join", { sessionId: "nope", joinToken }))).code,
    ).toBe("session_not_found");
    const bad = await rejectionOf(joiner.request("talk.session.join", { sessionId, joinToken: "wrong" }));
    expect(bad.code).toBe("invalid_join_token");
    const joined = await joiner.request("talk.session.join", { sessionId, joinToken });
    expect(JSON.stringify(joined)).not.toMatch(/token|hash/i);
  });

  it("the displaced connection gets session.replaced and nothing after; the joiner gets the replay, then session.ready", async () => {
    h = await startGateway();
    const owner = await h.connect();
    const ownerRec = recordEvents(owner);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    await owner.request("talk.session.startTurn", { sessionId });
    await ownerRec.next((e) => e.type === "capture.started");

    const joiner = await h.connect();
    const joinerRec = recordEvents(joiner);
    const joined = await joiner.request("talk.session.join", { sessionId, joinToken });
    await joinerRec.next((e) => e.type === "session.ready");
    await ownerRec.next((e) => e.type === "session.replaced");

    const replaced = ownerRec.events.at(-1)!;
    expect(replaced.type).toBe("session.replaced");
    // The joiner saw every event from seq 1, in order, ending with session.ready, except the
    // session.replaced addressed to the displaced owner: that seq alone is skipped.
    expect(joinerRec.events.some((e) => e.type === "session.replaced")).toBe(false);
    const before = ownerRec.events.slice(0, -1);
    expect(joinerRec.events.map((e) => e.type)).toEqual([...before.map((e) => e.type), "session.ready"]);
    expect(seqs(joinerRec.events)).toEqual([...seqs(before), replaced.seq + 1]);
    expect(joined).toMatchObject({ sessionId, complete: true, replayed: before.length });

    // The old owner has lost the session; the joiner drives it.
    expect((await rejectionOf(owner.request("talk.session.cancelTurn", { sessionId }))).code).toBe(
      "not_session_owner",
    );
    await expect(joiner.request("talk.session.cancelTurn", { sessionId })).resolves.toMatchObject({
      cancelled: true,
    });
    await joinerRec.next((e) => e.type === "turn.cancelled");
    expect(ownerRec.events.some((e) => e.type === "turn.cancelled")).toBe(false);
  });

  it("after a disconnect the session waits for the owner; a rejoin with afterSeq replays exactly the missed events in order", async () => {
    h = await startGateway();
    const first = await h.connect();
    const firstRec = recordEvents(first);
    const { sessionId, joinToken } = await first.request("talk.session.create", ROOM);
    const { turnId } = await first.request("talk.session.startTurn", { sessionId });
    await firstRec.next((e) => e.type === "capture.started");
    const lastSeen = firstRec.events.at(-1)?.seq as number;
    await first.close();

    // Events emitted while nobody is connected are kept for the replay.
    const session = h.runtime.getSession(sessionId);
    expect(session?.state).toBe("active");
    session?.cancelTurn(turnId, "client_request");

    const second = await h.connect();
    const secondRec = recordEvents(second);
    const joined = await second.request("talk.session.join", { sessionId, joinToken, afterSeq: lastSeen });
    await secondRec.next((e) => e.type === "session.ready");
    const missed = secondRec.events.filter((e) => e.type !== "session.ready");
    expect(missed.map((e) => e.type)).toEqual(["turn.cancelled"]);
    expect(seqs(secondRec.events)).toEqual(secondRec.events.map((_, i) => lastSeen + 1 + i));
    expect(joined.replayed).toBe(missed.length);
  });

  it("a session whose owner does not come back within the grace closes with owner_lost", async () => {
    h = await startGateway({ options: { reconnectGraceMs: 0 } });
    const client = await h.connect();
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const closed = new Promise<TalkEvent>((resolve) => {
      h!.runtime.getSession(sessionId)?.subscribe((e) => {
        if (e.type === "session.closed") resolve(e);
      });
    });
    await client.close();
    expect((await closed).payload).toMatchObject({ reason: "owner_lost" });
  });
});
