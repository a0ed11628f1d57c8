/**
 * Which RTP source is whom in Google Meet, from Meet's own signalling.
 *
 * Meet forwards the loudest few speakers over a few audio receivers; each
 * packet's contributing source (CSRC) says whose voice it carries. Meet
 * tells its own client which source belongs to which device, and which
 * device to which person, in two places (attendee-labs/attendee,
 * bots/google_meet_bot_adapter/google_meet_chromedriver_payload.js, which
 * maps `contributingSource.source` to a participant this way):
 *
 * - the `collections` data channel (opened by Meet's server, so it arrives as
 *   a `datachannel` event): each message is zlib-deflated protobuf, a
 *   `CollectionEvent` whose body (1) → (2) holds `deviceInfoWrapper` (3) →
 *   repeated `deviceOutputInfoList` (2) {`deviceOutputType` (2, varint),
 *   `streamId` (4, string: the source number in decimal), `deviceId` (6),
 *   `deviceOutputStatus` (10) {`disabled` (1)}} and
 *   `userInfoListWrapperAndChatWrapper` (13) → `userInfoListWrapper` (1) →
 *   repeated `userInfoList` (2) {`deviceId` (1), `fullName` (2),
 *   `displayName` (29), `parentDeviceId` (21, a screen share's owner)};
 * - the `SyncMeetingSpaceCollections` RPC's response, a base64 protobuf
 *   `UserInfoListResponse` (2) → (2) → repeated `userInfoList` (2) as above
 *   (fetched about once a minute; it also carries those who left).
 *
 * This page script (installed before Meet's scripts) decodes both with a
 * small protobuf reader and answers `window.__talkgateMeetSources()`: source
 * number → the person's full name (else display name), only for sources whose device belongs to a named
 * person (a screen share's source is named after its owner). The field
 * numbers are attendee's reading of Meet's wire format, not a published
 * schema: a message that does not decode is skipped, and a source stays
 * unnamed rather than guessed. Never verified here against live Meet.
 */
export const MEET_SOURCES_SCRIPT = String.raw`(() => {
  if (window.__talkgateMeetSources) return;
  const users = new Map(); // deviceId -> { name, parent }
  const outputs = new Map(); // streamId -> deviceId
  const utf8 = new TextDecoder();

  // A protobuf message as a map field number -> values (numbers for varints, bytes for length-delimited).
  function fields(b) {
    const out = new Map();
    let pos = 0;
    const varint = () => {
      let value = 0, scale = 1, byte;
      do {
        if (pos >= b.length) throw new Error("truncated");
        byte = b[pos++];
        value += (byte & 127) * scale;
        scale *= 128;
      } while (byte & 128);
      return value;
    };
    while (pos < b.length) {
      const key = varint();
      const field = Math.floor(key / 8), type = key % 8;
      let value;
      if (type === 0) value = varint();
      else if (type === 2) { const n = varint(); if (pos + n > b.length) throw new Error("truncated"); value = b.subarray(pos, pos + n); pos += n; }
      else if (type === 1) { pos += 8; continue; }
      else if (type === 5) { pos += 4; continue; }
      else throw new Error("wire type " + type);
      if (!out.has(field)) out.set(field, []);
      out.get(field).push(value);
    }
    return out;
  }
  const subs = (m, f) => (m.get(f) || []).filter((v) => v instanceof Uint8Array).map((v) => { try { return fields(v); } catch { return new Map(); } });
  const str = (m, f) => { const v = (m.get(f) || []).find((x) => x instanceof Uint8Array); return v ? utf8.decode(v) : ""; };

  function noteUser(u) {
    const deviceId = str(u, 1);
    // The full name, as attendee names a participant (web_bot_adapter.py get_participant: fullName) and as the
    // tiles the roster is read from show it; the display name (often the first name alone) only without one.
    const name = (str(u, 2) || str(u, 29)).trim();
    if (deviceId && name) users.set(deviceId, { name, parent: str(u, 21) });
  }
  function noteOutput(o) {
    const streamId = str(o, 4), deviceId = str(o, 6);
    if (/^[0-9]+$/.test(streamId) && deviceId) outputs.set(streamId, deviceId);
  }

  function collectionEvent(bytes) {
    for (const body of subs(fields(bytes), 1))
      for (const w of subs(body, 2)) {
        for (const info of subs(w, 3)) for (const o of subs(info, 2)) noteOutput(o);
        for (const uw of subs(w, 13)) for (const list of subs(uw, 1)) for (const u of subs(list, 2)) noteUser(u);
      }
  }
  function userInfoListResponse(bytes) {
    for (const a of subs(fields(bytes), 2)) for (const list of subs(a, 2)) for (const u of subs(list, 2)) noteUser(u);
  }

  async function inflate(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }
  async function onCollection(event) {
    try {
      const raw = new Uint8Array(event.data instanceof ArrayBuffer ? event.data : await new Blob([event.data]).arrayBuffer());
      let bytes;
      try { bytes = await inflate(raw); } catch { bytes = raw; }
      collectionEvent(bytes);
    } catch {
      // Not a message we can read: its sources stay unnamed.
    }
  }

  const Base = window.RTCPeerConnection;
  if (Base) {
    window.RTCPeerConnection = class extends Base {
      constructor(...args) {
        super(...args);
        this.addEventListener("datachannel", (e) => {
          if (e.channel && e.channel.label === "collections") e.channel.addEventListener("message", onCollection);
        });
      }
    };
  }
  const baseFetch = window.fetch;
  if (baseFetch) {
    window.fetch = async function (...args) {
      const response = await baseFetch.apply(this, args);
      try {
        if (/[./]MeetingSpaceService\/SyncMeetingSpaceCollections$/.test(response.url)) {
          response.clone().text().then((text) => {
            try {
              const bin = atob(text.trim());
              const bytes = new Uint8Array(bin.length);
              for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
              userInfoListResponse(bytes);
            } catch {}
          }, () => {});
        }
      } catch {}
      return response;
    };
  }

  window.__talkgateMeetSources = () => {
    const out = {};
    for (const [streamId, deviceId] of outputs) {
      const user = users.get(deviceId);
      if (!user) continue;
      // A screen share's audio is its owner's.
      const owner = user.parent ? users.get(user.parent) : undefined;
      out[streamId] = owner ? owner.name : user.name;
    }
    return out;
  };
})();`;
