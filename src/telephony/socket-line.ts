import type { WebSocket } from "ws";
import type { CarrierStreamCodec } from "./carrier/carrier-protocol.js";
import type { PlayoutLine } from "./playout/call-playout.js";
import type { ClockAcknowledger } from "./playout/clock-acknowledger.js";

/**
 * The playout's line over one socket, in the carrier's wire format. A burst
 * (media frames + its mark, or clear) is sent within one tick: corking the
 * TCP socket for the tick makes it one writev instead of one per message
 * (the largest cost of the relay when measured).
 */
export function socketLine(
  ws: WebSocket,
  codec: CarrierStreamCodec,
  acks: ClockAcknowledger | undefined,
): PlayoutLine {
  const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket?.uncork();
  };
  const send = (frame: string | Uint8Array): void => {
    if (ws.readyState !== ws.OPEN) return;
    if (socket && !corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    ws.send(frame);
  };
  return {
    media: (audio) => {
      send(codec.media(audio));
      acks?.media(audio.byteLength);
    },
    mark: (name) => (acks ? acks.mark(name) : send(codec.mark(name))),
    clear: () => {
      send(codec.clear());
      acks?.clear();
    },
    dtmf: codec.dtmf ? (digits: string) => send(codec.dtmf!(digits)) : undefined,
    flush: () => {
      if (corked) uncork(); // the uncork already queued for the tick then finds nothing corked
    },
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
  };
}
