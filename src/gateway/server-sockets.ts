import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * The sockets an HTTP server accepted and still holds: plain HTTP ones (idle
 * keep-alive, mid-request, or not one byte sent yet) and those upgraded to
 * WebSocket. Node's `server.close()` waits for every one of them but closes
 * only idle keep-alive ones, and ws waits 30 s for a close frame a peer may
 * never send; so whoever closes the server cuts what is left once it has had
 * its time, and the close ends whatever the peers do.
 */
export class ServerSockets {
  readonly #open = new Set<Socket>();
  #cut = false;

  constructor(server: Server) {
    server.on("connection", (socket: Socket) => {
      // Accepted after the cut (it raced the close): nothing would end it but its peer.
      if (this.#cut) {
        socket.destroy();
        return;
      }
      this.#open.add(socket);
      socket.once("close", () => this.#open.delete(socket));
    });
  }

  /** Sockets accepted and not closed yet. */
  get size(): number {
    return this.#open.size;
  }

  /** Destroys every open socket, and any accepted from now on; returns how many were open. */
  cut(): number {
    this.#cut = true;
    const open = [...this.#open];
    for (const socket of open) socket.destroy();
    return open.length;
  }
}
