import { randomUUID } from "node:crypto";

/** A room name: what may follow /meetings/test-room/. Anything else is "not found". */
export const ROOM_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** What the room needs of a participant's socket (the ws WebSocket fits). */
export interface RoomSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface RoomPeer {
  readonly id: string;
  readonly name: string;
  readonly host: boolean;
  readonly socket: RoomSocket;
}

/** Signalling messages, JSON text frames, both directions. */
export type RoomServerMessage =
  | { type: "welcome"; id: string; host: boolean; peers: { id: string; name: string }[] }
  | { type: "peer-joined"; id: string; name: string }
  | { type: "peer-left"; id: string }
  | { type: "signal"; from: string; data: unknown }
  | { type: "ended"; by: string }
  | { type: "chat"; from: string; text: string; at: string }
  | { type: "caption"; from: string; speaker: string; text: string; at: string };

export type RoomClientMessage =
  | { type: "signal"; to: string; data: unknown }
  | { type: "end" }
  | { type: "chat"; text: string }
  | { type: "caption"; speaker: string; text: string };

/** Longest chat message the room relays (characters); longer ones are dropped, as a platform refuses them. */
export const MAX_CHAT_CHARS = 2000;

/** Longest speaker name on a caption (characters), as a display name. */
export const MAX_SPEAKER_CHARS = 64;

interface Room {
  readonly peers: Map<string, RoomPeer>;
}

/**
 * The local test meeting's rooms: who is in which room, signalling relay
 * between them, the room's chat (relayed to everyone, the sender included,
 * stamped with the room's time), the captions a bot in the room posts
 * (relayed the same way, with the speaker they name), and the host's "end
 * for everyone". Rooms exist while someone is in them; the first participant
 * to join is the host.
 */
export class TestRoomRegistry {
  readonly #rooms = new Map<string, Room>();

  join(room: string, name: string, socket: RoomSocket): RoomPeer {
    let state = this.#rooms.get(room);
    if (!state) {
      state = { peers: new Map() };
      this.#rooms.set(room, state);
    }
    const peer: RoomPeer = { id: randomUUID(), name, host: state.peers.size === 0, socket };
    const others = [...state.peers.values()];
    state.peers.set(peer.id, peer);
    send(peer, {
      type: "welcome",
      id: peer.id,
      host: peer.host,
      peers: others.map((p) => ({ id: p.id, name: p.name })),
    });
    for (const other of others) send(other, { type: "peer-joined", id: peer.id, name: peer.name });
    return peer;
  }

  /** Handles one client message; malformed or misaddressed messages are ignored (a test room, not an API). */
  receive(room: string, from: RoomPeer, message: RoomClientMessage): void {
    const state = this.#rooms.get(room);
    if (!state?.peers.has(from.id)) return;
    if (message.type === "signal") {
      const to = state.peers.get(message.to);
      if (to) send(to, { type: "signal", from: from.id, data: message.data });
    } else if (message.type === "chat") {
      const text = typeof message.text === "string" ? message.text.trim() : "";
      if (text === "" || text.length > MAX_CHAT_CHARS) return;
      // Everyone sees it, the sender included (its page shows what the room accepted, with the room's time).
      const chat: RoomServerMessage = { type: "chat", from: from.name, text, at: new Date().toISOString() };
      for (const peer of state.peers.values()) send(peer, chat);
    } else if (message.type === "caption") {
      const text = typeof message.text === "string" ? message.text.trim() : "";
      const speaker = typeof message.speaker === "string" ? message.speaker.trim() : "";
      if (text === "" || text.length > MAX_CHAT_CHARS || speaker === "" || speaker.length > MAX_SPEAKER_CHARS)
        return;
      const caption: RoomServerMessage = {
        type: "caption",
        from: from.name,
        speaker,
        text,
        at: new Date().toISOString(),
      };
      for (const peer of state.peers.values()) send(peer, caption);
    } else if (message.type === "end" && from.host) {
      this.#rooms.delete(room);
      for (const peer of state.peers.values()) {
        send(peer, { type: "ended", by: from.name });
        peer.socket.close(1000, "meeting ended");
      }
    }
  }

  leave(room: string, peer: RoomPeer): void {
    const state = this.#rooms.get(room);
    if (!state?.peers.delete(peer.id)) return;
    if (state.peers.size === 0) this.#rooms.delete(room);
    for (const other of state.peers.values()) send(other, { type: "peer-left", id: peer.id });
  }

  /** Sockets in every room. */
  get socketCount(): number {
    let n = 0;
    for (const room of this.#rooms.values()) n += room.peers.size;
    return n;
  }

  /** Participant names per room, for diagnostics. */
  participants(room: string): string[] {
    return [...(this.#rooms.get(room)?.peers.values() ?? [])].map((p) => p.name);
  }
}

function send(peer: RoomPeer, message: RoomServerMessage): void {
  try {
    peer.socket.send(JSON.stringify(message));
  } catch {
    // The socket is closing; its close handler removes the peer.
  }
}
