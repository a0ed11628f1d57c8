import { describe, expect, it } from "vitest";
import { type QueuedSocket, type QueueLimit, SendQueueBudget } from "./send-queue-budget.js";

/** A socket whose queue the test sets, recording its cut. */
class FakeSocket implements QueuedSocket {
  queuedBytes = 0;
  cutBy: QueueLimit | undefined;
  constructor(
    readonly name: string,
    readonly principal: string,
  ) {}
  cut(limit: QueueLimit): void {
    this.cutBy = limit;
  }
}

function budget(maxPerConnection: number, maxPerClient: number, maxTotal: number): SendQueueBudget {
  return new SendQueueBudget({ maxPerConnection, maxPerClient, maxTotal });
}

/** Queues `bytes` more on `socket` through the budget (admitted first, as a send is). */
function send(b: SendQueueBudget, socket: FakeSocket, bytes: number): boolean {
  if (!b.admits(socket)) return false;
  socket.queuedBytes += bytes;
  b.sent(socket);
  return true;
}

describe("SendQueueBudget", () => {
  it("cuts a connection whose own queue passed its bound before sending it more", () => {
    const b = budget(100, 1000, 1000);
    const a = new FakeSocket("a", "t1");
    b.add(a);
    expect(send(b, a, 150)).toBe(true); // one frame may pass the bound; the next is refused
    expect(send(b, a, 10)).toBe(false);
    expect(a.cutBy).toBe("connection");
  });

  it("past the total, cuts the connections with the longest queues first until it holds", () => {
    const b = budget(1000, 1000, 300);
    const [slow, slower, fast] = [
      new FakeSocket("slow", "t1"),
      new FakeSocket("slower", "t2"),
      new FakeSocket("fast", "t3"),
    ];
    for (const s of [slow, slower, fast]) b.add(s);
    send(b, slow, 120);
    send(b, slower, 160);
    send(b, fast, 10);
    expect([slow, slower, fast].map((s) => s.cutBy)).toEqual([undefined, undefined, undefined]);
    send(b, fast, 30); // 320 > 300: the longest queue goes
    expect([slow, slower, fast].map((s) => s.cutBy)).toEqual([undefined, "total", undefined]);
    expect(b.queuedBytes).toBe(160);
  });

  it("past a client's bound (one token's sockets), cuts that client's slowest connection, never another's", () => {
    const b = budget(1000, 200, 10_000);
    const [a1, a2, other] = [new FakeSocket("a1", "a"), new FakeSocket("a2", "a"), new FakeSocket("b", "b")];
    for (const s of [a1, a2, other]) b.add(s);
    send(b, other, 190);
    send(b, a1, 150);
    send(b, a2, 40);
    expect(a1.cutBy).toBeUndefined();
    send(b, a2, 40); // a: 230 > 200
    expect([a1.cutBy, a2.cutBy, other.cutBy]).toEqual(["client", undefined, undefined]);
  });

  it("counts queues that drained since they were last seen before it cuts anyone", () => {
    const b = budget(1000, 1000, 300);
    const [idle, busy] = [new FakeSocket("idle", "t1"), new FakeSocket("busy", "t2")];
    b.add(idle);
    b.add(busy);
    send(b, idle, 250);
    idle.queuedBytes = 0; // its peer read everything; the budget has not seen it since
    send(b, busy, 200); // estimated 450, exactly 200: nobody is cut
    expect([idle.cutBy, busy.cutBy]).toEqual([undefined, undefined]);
  });

  it("forgets a connection that closed, and its bytes", () => {
    const b = budget(1000, 1000, 300);
    const [gone, stays] = [new FakeSocket("gone", "t1"), new FakeSocket("stays", "t1")];
    b.add(gone);
    b.add(stays);
    send(b, gone, 250);
    b.delete(gone);
    b.delete(gone);
    send(b, stays, 200);
    expect(stays.cutBy).toBeUndefined();
    expect(b.queuedBytes).toBe(200);
  });
});
