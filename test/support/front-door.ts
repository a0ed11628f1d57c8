/**
 * A small front door (load balancer) for two-worker tests: plain HTTP
 * requests go to one worker, WebSocket upgrades to another, as a round-robin
 * or least-connections balancer may well do with a carrier's webhook and the
 * media stream that follows it. Raw TCP piping for upgrades (the WebSocket
 * handshake and frames pass through untouched); requests are relayed with
 * their method, headers (Host included: carriers sign the public URL, not the
 * Host) and body.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";

export interface FrontDoorRoutes {
  /** host:port that plain HTTP requests go to. */
  http: () => { host: string; port: number };
  /** host:port that WebSocket upgrades go to. */
  upgrade: () => { host: string; port: number };
}

export class FrontDoor {
  readonly #server: Server;
  readonly #routes: FrontDoorRoutes;
  /** Requests and upgrades relayed, by kind (what the test asserts about the routing). */
  readonly relayed = { http: 0, upgrade: 0 };

  constructor(routes: FrontDoorRoutes) {
    this.#routes = routes;
    this.#server = createServer((req, res) => {
      this.relayed.http++;
      const target = this.#routes.http();
      const upstream = httpRequest(
        { host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer: IncomingMessage) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
    this.#server.on("upgrade", (req: IncomingMessage, socket, head: Buffer) => {
      this.relayed.upgrade++;
      const target = this.#routes.upgrade();
      const upstream = connect(target.port, target.host, () => {
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
        if (head.length > 0) upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      const drop = (): void => {
        upstream.destroy();
        socket.destroy();
      };
      upstream.on("error", drop);
      socket.on("error", drop);
      upstream.on("close", () => socket.destroy());
      socket.on("close", () => upstream.destroy());
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** host and port of an http://host:port URL. */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}
