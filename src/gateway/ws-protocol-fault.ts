/**
 * A WebSocket protocol fault of a client (the `ws` library's receiver
 * errors: invalid UTF-8 in a text frame, a frame above maxPayload, a bad
 * opcode...): `ws` has already sent the close frame with the fault's code
 * when the error is emitted. These are the client's faults, not ours: logged
 * as warnings with a reason, rate-limited per reason per window
 * (WindowedLogLimiter), and the connection is left to finish its closing
 * handshake instead of being cut.
 */
import type { WebSocket } from "ws";
import type { TalkLogger, WindowedLogLimiter } from "../core/index.js";

/** Reasons of the faults clients cause most; other ws codes become lowercase `ws_err_*`. */
const REASONS: Readonly<Record<string, string>> = Object.freeze({
  WS_ERR_INVALID_UTF8: "invalid_utf8",
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: "frame_too_large",
  WS_ERR_INVALID_OPCODE: "invalid_opcode",
  WS_ERR_EXPECTED_MASK: "unmasked_frame",
  WS_ERR_INVALID_CLOSE_CODE: "invalid_close_code",
});

/** Close codes `ws` sends for its receiver errors (RFC 6455 7.4.1), when the error does not carry one. */
const CLOSE_CODES: Readonly<Record<string, number>> = Object.freeze({
  WS_ERR_INVALID_UTF8: 1007,
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: 1009,
});

export interface WsProtocolFault {
  reason: string;
  /** The close code sent to the client for it. */
  closeCode: number;
}

/** The fault an error of a socket is, or undefined when it is not a client protocol fault. */
export function wsProtocolFault(err: unknown): WsProtocolFault | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string" || !code.startsWith("WS_ERR_")) return undefined;
  // ws keeps the close code it sent under a symbol named "status-code".
  const symbol = Object.getOwnPropertySymbols(err).find((s) => s.description === "status-code");
  const carried = symbol === undefined ? undefined : (err as unknown as Record<symbol, unknown>)[symbol];
  const closeCode = typeof carried === "number" ? carried : (CLOSE_CODES[code] ?? 1002);
  return { reason: REASONS[code] ?? code.toLowerCase(), closeCode };
}

/**
 * The errorHandler of @fastify/websocket for every WebSocket route: a client
 * protocol fault is a rate-limited warning and the socket finishes its close;
 * anything else (a route handler that threw) is an error and the socket is cut.
 */
export function websocketErrorHandler(
  logger: TalkLogger,
  limiter: WindowedLogLimiter,
): (
  error: Error,
  socket: WebSocket,
  request: { url: string; socket: { remoteAddress?: string | undefined } },
) => void {
  return (error, socket, request) => {
    const fault = wsProtocolFault(error);
    if (fault) {
      const decision = limiter.take(fault.reason);
      if (decision.log) {
        logger.warn(
          {
            reason: fault.reason,
            closeCode: fault.closeCode,
            path: request.url.split("?")[0],
            ip: request.socket.remoteAddress,
            ...(decision.suppressed > 0 ? { suppressed: decision.suppressed } : {}),
          },
          `websocket client protocol fault: ${fault.reason}`,
        );
      }
      return;
    }
    logger.error({ err: error, path: request.url.split("?")[0] }, "websocket route failed");
    socket.terminate();
  };
}
