import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createAppLogger } from "./logger.js";

const PLANTED = "PLANTED-LOG-SECRET-42";

describe("createAppLogger", () => {
  it("redacts every line: secret names, URL credentials and queries, error messages and the message text", async () => {
    const lines: string[] = [];
    const logger = createAppLogger(
      "info",
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    logger.info(
      {
        url: `https://h.example/v1?api_key=${PLANTED}`,
        settings: { headers: { Authorization: `Bearer ${PLANTED}` }, secretAccessKey: PLANTED },
        err: new Error(`POST https://user:${PLANTED}@h.example/x failed`),
      },
      `calling https://h.example/v1?key=${PLANTED}`,
    );
    logger.child({ component: "x" }).warn({ apiKeys: [PLANTED] }, "child line");
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain(PLANTED);
    const first = JSON.parse(lines[0] as string) as { err: { message: string }; msg: string };
    expect(first.err.message).toContain("failed");
    expect(first.msg).toContain("https://h.example/v1?[redacted]");
  });
});
