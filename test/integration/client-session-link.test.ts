import { afterEach, describe, expect, it } from "vitest";
import { SessionLink } from "../../src/client/session-link.js";
import { TalkClient } from "../../src/client/talk-client.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { SPEECH_FORMAT, startGateway, TOKENS, type GatewayHarness } from "../support/gateway-harness.js";

/** The one client's reconnect: SessionLink rejoins a dropped Gateway session with afterSeq. */

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
};

describe("SessionLink", () => {
  it("a dropped connection rejoins the session with afterSeq: each event once, in seq order, verbs work again", async () => {
    h = await startGateway();
    const events: TalkEvent[] = [];
    const states: string[] = [];
    const link = new SessionLink({
      connect: () => TalkClient.connect(h!.wsUrl, { token: TOKENS.writer }),
      onEvent: (e) => events.push(e),
      onState: (s) => states.push(s),
      backoffMs: [20],
    });
    await link.connect();
    const { sessionId } = await link.create({
      mode: "stt-tts",
      transport: "managed-room",
      inputFormat: SPEECH_FORMAT,
    });
    const { turnId } = await link.verb("startTurn");
    await until(() => events.some((e) => e.type === "turn.started"));
    link.drop();
    await until(() => link.stats.joins === 1 && link.connected);
    // Events emitted while the link was down reach it through the replay.
    await link.verb("cancelTurn", { turnId });
    await until(() => events.some((e) => e.type === "turn.cancelled"));
    expect(states).toEqual(["connected", "reconnecting", "connected"]);
    expect(events.every((e) => e.sessionId === sessionId)).toBe(true);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(link.stats).toMatchObject({ joins: 1, gaps: 0, incompleteReplays: 0 });
    await link.close();
    expect(link.connected).toBe(false);
    // Closing the link closes the session on the server (a client_request, not the grace running out).
    expect(h.runtime.getSession(sessionId)?.state ?? "closed").toBe("closed");
  });

  it("a session that cannot be rejoined (closed meanwhile) ends the link as lost", async () => {
    h = await startGateway();
    const states: string[] = [];
    const link = new SessionLink({
      connect: () => TalkClient.connect(h!.wsUrl, { token: TOKENS.writer }),
      onEvent: () => {},
      onState: (s) => states.push(s),
      backoffMs: [20],
    });
    await link.connect();
    const { sessionId } = await link.create({ mode: "stt-tts", transport: "managed-room" });
    const admin = await h.connect({ as: "admin" });
    await admin.requestUntyped("admin.session.close", { sessionId });
    link.drop();
    await until(() => states.includes("lost"));
    expect(states.at(-1)).toBe("lost");
    await admin.close();
  });
});
