import WebSocket from "ws";
import { TalkError } from "../core/index.js";
import type { WireError } from "../gateway/index.js";
import { fromWire } from "./wire-errors.js";
import type { SocketOptions, WireSocket } from "./wire-socket.js";

/** Opens the Talk socket from Node with `ws`: the token as an Authorization header, HTTP refusals read for their code. */
export function openSocket(url: string, options: SocketOptions): Promise<WireSocket> {
  const ws = new WebSocket(url, {
    maxPayload: options.maxPayloadBytes ?? 64 * 1024 * 1024,
    ...(options.token !== undefined ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      ws.removeAllListeners("unexpected-response");
      resolve(wrap(ws));
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        ws.terminate();
        reject(httpRefusal(res.statusCode ?? 0, body));
      });
    });
    ws.once("error", (err) => {
      reject(
        new TalkError("provider_unavailable", `Cannot connect to ${url}: ${err.message}`, { cause: err }),
      );
    });
  });
}

function wrap(ws: WebSocket): WireSocket {
  ws.on("error", () => {
    // 'close' follows; the client rejects what is pending there.
  });
  return {
    get open() {
      return ws.readyState === WebSocket.OPEN;
    },
    send: (text, onError) => ws.send(text, (err) => err && onError(err)),
    close: (code, reason) => {
      if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close(code, reason);
    },
    onMessage: (listener) =>
      ws.on("message", (data, isBinary) => {
        if (!isBinary) listener(data.toString());
      }),
    onClose: (listener) => {
      if (ws.readyState === WebSocket.CLOSED) queueMicrotask(() => listener(1006, ""));
      else ws.once("close", (code, reason) => listener(code, reason.toString()));
    },
  };
}

function httpRefusal(status: number, body: string): TalkError {
  try {
    const parsed = JSON.parse(body) as { error?: WireError };
    if (parsed.error?.code) return fromWire(parsed.error);
  } catch {
    // Not our JSON body: fall through to the status.
  }
  if (status === 401) return new TalkError("unauthorized");
  if (status === 403) return new TalkError("forbidden");
  return new TalkError("provider_unavailable", `The server refused the connection with HTTP ${status}.`);
}
