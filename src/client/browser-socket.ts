import { TalkError } from "../core/index.js";
import type { SocketOptions, WireSocket } from "./wire-socket.js";

/**
 * Opens the Talk socket in a browser. A browser cannot set headers on a
 * WebSocket, so a token is offered as the `bearer.<token>` subprotocol beside
 * `talkgate`; and it shows a script no HTTP status, so a refusal (a wrong
 * token, a server shutting down) is `provider_unavailable` with the close code.
 */
export function openSocket(url: string, options: SocketOptions): Promise<WireSocket> {
  const protocols = options.token ? ["talkgate", `bearer.${options.token}`] : ["talkgate"];
  const ws = new WebSocket(url, protocols);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }), { once: true }),
  );
  return new Promise((resolve, reject) => {
    ws.addEventListener("open", () => resolve(wrap(ws, closed)), { once: true });
    void closed.then(({ code }) =>
      reject(
        new TalkError(
          "provider_unavailable",
          `The server refused the connection or could not be reached (close ${code}).`,
          { details: { closeCode: code } },
        ),
      ),
    );
  });
}

function wrap(ws: WebSocket, closed: Promise<{ code: number; reason: string }>): WireSocket {
  return {
    get open() {
      return ws.readyState === WebSocket.OPEN;
    },
    send: (text, onError) => {
      try {
        ws.send(text);
      } catch (err) {
        onError(err instanceof Error ? err : new Error(String(err)));
      }
    },
    close: (code, reason) => ws.close(code, reason),
    onMessage: (listener) =>
      ws.addEventListener("message", (e) => {
        if (typeof e.data === "string") listener(e.data);
      }),
    onClose: (listener) => void closed.then(({ code, reason }) => listener(code, reason)),
  };
}
