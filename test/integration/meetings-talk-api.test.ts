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
    // The bot camera: "off", "card" or "url" with a cameraUrl on an allowed origin (none configured here).
    const create = (camera: string, cameraUrl?: string) =>
      a.call("meetings.bots.create", {
        meetingUrl: h.roomUrl("x"),
        botName: "B",
        mode: "transcribe",
        camera,
        ...(cameraUrl ? { cameraUrl } : {}),
      });
    const refusedUrl = await create("url", "https://example.com/board");
    expect(refusedUrl.error.code).toBe("invalid_params");
    expect(refusedUrl.error.details.issues[0].path).toBe("cameraUrl");
    expect((await create("url")).error.details.issues[0].path).toBe("cameraUrl");
    expect((await create("card", h.baseUrl)).error.details.issues[0].path).toBe("cameraUrl");
    expect((await create("hologram")).error.code).toBe("invalid_params");
    const viaHttp = await fetch(`${h.baseUrl}/meetings/bots`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({
        meetingUrl: h.roomUrl("x"),
        botName: "B",
        mode: "transcribe",
        camera: "url",
        cameraUrl: "file:///etc/passwd",
      }),
    });
    expect(viaHttp.status).toBe(400);
    const refused = (await viaHttp.json()) as {
      error: { code: string; details: { issues: { path: string }[] } };
    };
    expect(refused.error.code).toBe("invalid_params");
    expect(refused.error.details.issues[0]!.path).toBe("cameraUrl");
  });

  it("a read token follows a bot (here one that ended at once) over the Talk API and SSE; bad follows are refused", async () => {
    const admin = await connect();
    // A room name outside [a-z0-9-] is the test room's "meeting not found": the bot ends fatal quickly.
    const created = await admin.call("meetings.bots.create", {
      meetingUrl: `${h.baseUrl}/meetings/test-room/NoSuchRoom`,
      botName: "B",
      mode: "transcribe",
    });
    expect(created.ok).toBe(true);
    const botId = created.payload.id as string;
    await expect
      .poll(async () => (await admin.call("meetings.bots.get", { botId })).payload.state, { timeout: 30_000 })
      .toBe("fatal");
    const reader = await connect(READER);
    const followed = await reader.call("meetings.bots.follow", { botId });
    expect(followed.payload).toMatchObject({ botId, afterIndex: -1, status: { state: "fatal" } });
    await expect
      .poll(() => reader.events.find((e) => e.event === "meetings.follow.ended")?.payload.status.subCode)
      .toBe("meeting_not_found");
    expect((await reader.call("meetings.bots.follow", { botId: "no-such-bot" })).error.code).toBe(
      "session_not_found",
    );
    expect((await reader.call("meetings.bots.follow", { botId, afterIndex: 1.5 })).error.code).toBe(
      "invalid_params",
    );
    expect((await reader.call("meetings.bots.follow", { botId, extra: 1 })).error.code).toBe(
      "invalid_params",
    );
    expect((await reader.call("meetings.bots.unfollow", { botId: "x" })).payload).toEqual({
      botId: "x",
      following: false,
      wasFollowing: false,
    });
    expect((await reader.call("meetings.bots.transcript", { botId, format: "doc" })).error.code).toBe(
      "invalid_params",
    );
    expect((await reader.call("meetings.bots.transcript", { botId, format: "vtt" })).payload).toEqual({
      botId,
      format: "vtt",
      text: "WEBVTT\n",
    });
    // SSE needs a token like every route; with one it streams the status and the end.
    expect((await fetch(`${h.baseUrl}/meetings/bots/${botId}/transcript/live`)).status).toBe(401);
    const live = await fetch(`${h.baseUrl}/meetings/bots/${botId}/transcript/live`, {
      headers: { authorization: `Bearer ${READER}` },
    });
    expect(live.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await live.text();
    expect(text).toMatch(/^event: end\ndata: \{.*"state":"fatal"/m);
    expect(
      (
        await fetch(`${h.baseUrl}/meetings/bots/${botId}/transcript/live?after=x`, {
          headers: { authorization: `Bearer ${READER}` },
        })
      ).status,
    ).toBe(400);
  }, 60_000);

  it("lists the meetings methods with their scopes", () => {
    expect(h.app.gateway.scopes).toMatchObject({
      "voicewake.get": "read",
      "voicewake.set": "admin",
      "meetings.bots.create": "write",
      "meetings.bots.get": "read",
      "meetings.bots.delete": "write",
      "meetings.bots.transcript": "read",
      "meetings.bots.follow": "read",
      "meetings.bots.unfollow": "read",
    });
  });
});
