import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { connectTalk, startMeetingsHarness, type MeetingsHarness } from "./meetings-harness.js";

/** The meetings surface on the Talk API (no browser needed): voicewake.* and meetings.bots.*. */
const ADMIN = "admin-token-0123456789";
const READER = "reader-token-0123456789";

describe("meetings on the Talk API", () => {
  let h: MeetingsHarness;
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    h = await startMeetingsHarness(
      { wakeTriggers: ["computer"] },
      {
        auth: {
          tokens: [
            { name: "admin", token: ADMIN, scopes: ["admin"] },
            { name: "reader", token: READER, scopes: ["read"] },
          ],
        },
      },
    );
  }, 30_000);

  afterAll(async () => {
    for (const s of sockets) s.close();
    await h?.close();
  }, 30_000);

  const connect = (token = ADMIN) => connectTalk(h.baseUrl, token, sockets);

  it("voicewake.set persists the triggers, answers them on voicewake.get and broadcasts voicewake.changed to every connection", async () => {
    const a = await connect();
    const b = await connect();
    expect((await a.call("voicewake.get")).payload.triggers).toEqual(["computer"]);
    const set = await a.call("voicewake.set", { triggers: ["hey talkgate", "computer"] });
    expect(set.ok).toBe(true);
    expect(set.payload.triggers).toEqual(["hey talkgate", "computer"]);
    expect((await b.call("voicewake.get")).payload.triggers).toEqual(["hey talkgate", "computer"]);
    await expect
      .poll(() => b.events.find((e) => e.event === "voicewake.changed")?.payload.triggers)
      .toEqual(["hey talkgate", "computer"]);
    const file = JSON.parse(readFileSync(join(h.dir, "data", "settings", "voicewake.json"), "utf8"));
    expect(file.triggers).toEqual(["hey talkgate", "computer"]);
  });

  it("voicewake.set refuses an empty list or unknown keys with invalid_params", async () => {
    const a = await connect();
    expect((await a.call("voicewake.set", { triggers: [] })).error.code).toBe("invalid_params");
    expect((await a.call("voicewake.set", { triggers: ["  "] })).error.code).toBe("invalid_params");
    expect((await a.call("voicewake.set", { triggers: ["x1"], extra: 1 })).error.code).toBe("invalid_params");
  });

  it("voicewake.set needs the admin scope; a read token may only read", async () => {
    const reader = await connect(READER);
    expect((await reader.call("voicewake.get")).ok).toBe(true);
    expect((await reader.call("voicewake.set", { triggers: ["x1"] })).error.code).toBe("forbidden");
    expect((await reader.call("meetings.bots.delete", { botId: "x" })).error.code).toBe("forbidden");
  });

  it("meetings.bots.* answer session_not_found for an unknown bot and invalid_params for a bad request", async () => {
    const a = await connect();
    for (const method of ["meetings.bots.get", "meetings.bots.delete", "meetings.bots.transcript"]) {
      expect((await a.call(method, { botId: "no-such-bot" })).error.code).toBe("session_not_found");
    }
    expect(
      (
        await a.call("meetings.bots.create", {
          meetingUrl: "https://meet.example.org/x",
          botName: "B",
          mode: "transcribe",
        })
      ).error.code,
    ).toBe("invalid_params");
    expect(
      (await a.call("meetings.bots.create", { meetingUrl: h.roomUrl("x"), botName: "B", mode: "sing" })).error
        .code,
    ).toBe("invalid_params");
  });

  it("lists the meetings methods with their scopes", () => {
    expect(h.app.gateway.scopes).toMatchObject({
      "voicewake.get": "read",
      "voicewake.set": "admin",
      "meetings.bots.create": "write",
      "meetings.bots.get": "read",
      "meetings.bots.delete": "write",
      "meetings.bots.transcript": "read",
    });
  });
});
