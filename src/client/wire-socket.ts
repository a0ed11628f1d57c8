/**
 * The one socket the Talk client needs, whatever runs it: Node (`ws`, which
 * can send an Authorization header) or a browser (`WebSocket`, which cannot,
 * so a token travels as the `bearer.<token>` subprotocol beside `talkgate`).
 * `node-socket.ts` and `browser-socket.ts` each open one; the browser build
 * (src/app/client-bundle.ts) swaps the first for the second.
 */
export interface WireSocket {
  /** True while frames can be sent. */
  readonly open: boolean;
  /** Sends one text frame; `onError` when it could not be written (Node reports it; browsers drop silently). */
  send(text: string, onError: (err: Error) => void): void;
  close(code: number, reason: string): void;
  /** Text frames only (the Talk API sends no binary frames). */
  onMessage(listener: (text: string) => void): void;
  /** Once, when the socket has closed (either side, or the network). */
  onClose(listener: (code: number, reason: string) => void): void;
}

export interface SocketOptions {
  token?: string;
  /** Largest frame accepted, bytes (Node only: a browser sets its own limit). */
  maxPayloadBytes?: number;
}

/** Opens a socket; rejects with a coded TalkError (`unauthorized`, `shutting_down`, `provider_unavailable`...). */
export type OpenSocket = (url: string, options: SocketOptions) => Promise<WireSocket>;
