import { describe, expect, it } from "vitest";
import {
  MAX_CHAT_CHARS,
  MAX_SPEAKER_CHARS,
  TestRoomRegistry,
  type RoomClientMessage,
} from "./test-room-registry.js";

function socket() {
  const received: Record<string, unknown>[] = [];
  return { received, send: (d: string) => received.push(JSON.parse(d)), close: () => {} };
}

describe("TestRoomRegistry chat", () => {
  it("relays a message to everyone in the room, the sender included, with its name and the room's time", () => {
    const registry = new TestRoomRegistry();
    const a = socket();
    const b = socket();
    const other = socket();
    const alice = registry.join("r", "Alice", a);
    registry.join("r", "Bob", b);
    registry.join("elsewhere", "Eve", other);
    registry.receive("r", alice, { type: "chat", text: "  hello  " });
    const chats = (s: ReturnType<typeof socket>) => s.received.filter((m) => m["type"] === "chat");
    expect(chats(a)).toEqual([{ type: "chat", from: "Alice", text: "hello", at: expect.any(String) }]);
    expect(chats(b)).toEqual(chats(a));
    expect(Number.isFinite(Date.parse(chats(a)[0]!["at"] as string))).toBe(true);
    expect(chats(other)).toEqual([]);
  });

  it("drops blank, oversized and non-text messages", () => {
    const registry = new TestRoomRegistry();
    const a = socket();
    const alice = registry.join("r", "Alice", a);
    for (const text of ["", "   ", "x".repeat(MAX_CHAT_CHARS + 1), 42, null, { a: 1 }]) {
      registry.receive("r", alice, { type: "chat", text } as unknown as RoomClientMessage);
    }
    expect(a.received.filter((m) => m["type"] === "chat")).toEqual([]);
    registry.receive("r", alice, { type: "chat", text: "x".repeat(MAX_CHAT_CHARS) });
    expect(a.received.filter((m) => m["type"] === "chat")).toHaveLength(1);
  });
});

describe("TestRoomRegistry captions", () => {
  it("relays a bot's caption to everyone in the room with the speaker it names and the poster", () => {
    const registry = new TestRoomRegistry();
    const a = socket();
    const b = socket();
    const other = socket();
    registry.join("r", "Alice", a);
    const bot = registry.join("r", "Notetaker", b);
    registry.join("elsewhere", "Eve", other);
    registry.receive("r", bot, { type: "caption", speaker: " Alice ", text: " go forward ten meters " });
    const captions = (s: ReturnType<typeof socket>) => s.received.filter((m) => m["type"] === "caption");
    expect(captions(a)).toEqual([
      {
        type: "caption",
        from: "Notetaker",
        speaker: "Alice",
        text: "go forward ten meters",
        at: expect.any(String),
      },
    ]);
    expect(captions(b)).toEqual(captions(a));
    expect(captions(other)).toEqual([]);
  });

  it("drops captions without text or speaker, oversized ones, and non-text fields", () => {
    const registry = new TestRoomRegistry();
    const a = socket();
    const bot = registry.join("r", "Notetaker", a);
    for (const [speaker, text] of [
      ["Alice", ""],
      ["", "hello"],
      ["Alice", "x".repeat(MAX_CHAT_CHARS + 1)],
      ["A".repeat(MAX_SPEAKER_CHARS + 1), "hello"],
      [42, "hello"],
      ["Alice", { a: 1 }],
    ]) {
      registry.receive("r", bot, { type: "caption", speaker, text } as unknown as RoomClientMessage);
    }
    expect(a.received.filter((m) => m["type"] === "caption")).toEqual([]);
  });
});
