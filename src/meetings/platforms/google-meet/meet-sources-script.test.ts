import { deflateSync } from "node:zlib";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { MEET_SOURCES_SCRIPT } from "./meet-sources-script.js";

/** A tiny protobuf writer for the test's messages: [field, value] pairs (string, number or nested pairs). */
type Field = [number, string | number | Field[]];
function encode(fields: Field[]): Uint8Array {
  const out: number[] = [];
  const varint = (n: number): void => {
    while (n >= 128) {
      out.push((n % 128) | 128);
      n = Math.floor(n / 128);
    }
    out.push(n);
  };
  for (const [field, value] of fields) {
    if (typeof value === "number") {
      varint(field * 8);
      varint(value);
    } else {
      const bytes = typeof value === "string" ? new TextEncoder().encode(value) : encode(value);
      varint(field * 8 + 2);
      varint(bytes.length);
      out.push(...bytes);
    }
  }
  return Uint8Array.from(out);
}

const user = (deviceId: string, fullName: string, extra: Field[] = []): Field => [
  2,
  [[1, deviceId], [2, fullName], [4, 1], ...extra],
];
const output = (streamId: string, deviceId: string, type = 1): Field => [
  2,
  [
    [2, type],
    [4, streamId],
    [6, deviceId],
    [10, [[1, 0]]],
  ],
];
/** A CollectionEvent: body (1) -> (2) -> deviceInfoWrapper (3) / userInfoListWrapperAndChatWrapper (13). */
function collectionEvent(outputs: Field[], users: Field[]): Uint8Array {
  return encode([
    [
      1,
      [
        [
          2,
          [
            [3, outputs],
            [13, [[1, [[1, [[1, 7]]], ...users]]]],
          ],
        ],
      ],
    ],
  ]);
}

/** Runs the page script in a context with a stand-in RTCPeerConnection and fetch; answers the page's hooks. */
function page(fetched: Record<string, string> = {}) {
  class FakePeerConnection {
    readonly listeners = new Map<string, ((e: unknown) => void)[]>();
    addEventListener(type: string, fn: (e: unknown) => void): void {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
    }
    dispatch(type: string, event: unknown): void {
      for (const fn of this.listeners.get(type) ?? []) fn(event);
    }
  }
  const window: Record<string, unknown> = {
    RTCPeerConnection: FakePeerConnection,
    fetch: async (url: string) => {
      const body = fetched[url] ?? "";
      const response = new Response(body);
      Object.defineProperty(response, "url", { value: url });
      return response;
    },
  };
  runInNewContext(MEET_SOURCES_SCRIPT, {
    window,
    TextDecoder,
    Blob,
    Response,
    DecompressionStream,
    atob,
    Uint8Array,
    ArrayBuffer,
    Map,
  });
  const Pc = window["RTCPeerConnection"] as new () => FakePeerConnection;
  return {
    sources: () => (window["__talkgateMeetSources"] as () => Record<string, string>)(),
    fetch: window["fetch"] as (url: string) => Promise<Response>,
    /** A peer connection that receives Meet's "collections" channel; answers a function that delivers a message. */
    collections(): (data: Uint8Array) => Promise<void> {
      const pc = new Pc();
      const channel = new FakePeerConnection() as FakePeerConnection & { label: string };
      channel.label = "collections";
      pc.dispatch("datachannel", { channel });
      return async (data) => {
        channel.dispatch("message", {
          data: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
        });
        // The page inflates asynchronously.
        for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 1));
      };
    },
  };
}

describe("Meet's sources from its collections channel (attendee's field numbers)", () => {
  it("names each audio source after its device's participant, from a deflated CollectionEvent", async () => {
    const p = page();
    const deliver = p.collections();
    await deliver(
      deflateSync(
        collectionEvent(
          [output("1234567", "dev-alice"), output("89", "dev-bob"), output("90", "dev-carl")],
          [
            user("dev-alice", "Alice Example", [[29, "Alice"]]),
            user("dev-bob", "Bob Example"),
            [
              2,
              [
                [1, "dev-carl"],
                [29, "Carl"],
              ],
            ],
          ],
        ),
      ),
    );
    // fullName (2), as the tiles and attendee name a participant; displayName (29) only without one.
    expect(p.sources()).toEqual({ "1234567": "Alice Example", "89": "Bob Example", "90": "Carl" });
  });

  it("learns names and sources from separate messages, and the names from the SyncMeetingSpaceCollections RPC", async () => {
    const url =
      "https://meet.google.com/$rpc/google.rtc.meetings.v1.MeetingSpaceService/SyncMeetingSpaceCollections";
    const sync = encode([[2, [[2, [user("dev-carol", "Carol Example")]]]]]);
    const p = page({ [url]: Buffer.from(sync).toString("base64") });
    const deliver = p.collections();
    await deliver(deflateSync(collectionEvent([output("4242", "dev-carol")], [])));
    expect(p.sources()).toEqual({});
    await p.fetch(url);
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 1));
    expect(p.sources()).toEqual({ "4242": "Carol Example" });
  });

  it("names a screen share's source after its owner, reads an uncompressed message, and skips garbage", async () => {
    const p = page();
    const deliver = p.collections();
    await deliver(Uint8Array.from([0xff, 0xff, 0xff, 0x0a, 0x99]));
    await deliver(
      collectionEvent(
        [output("777", "dev-share")],
        [user("dev-dan", "Dan Example"), user("dev-share", "Dan Example (Presentation)", [[21, "dev-dan"]])],
      ),
    );
    expect(p.sources()).toEqual({ "777": "Dan Example" });
  });

  it("never names a source whose device is unknown or nameless, nor a non-numeric stream id", async () => {
    const p = page();
    const deliver = p.collections();
    await deliver(
      deflateSync(
        collectionEvent(
          [output("55", "dev-nobody"), output("abc", "dev-eve"), output("66", "dev-blank")],
          [user("dev-eve", "Eve Example"), user("dev-blank", "  ")],
        ),
      ),
    );
    expect(p.sources()).toEqual({});
  });
});
