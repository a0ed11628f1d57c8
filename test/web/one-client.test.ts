import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { buildClientBundle } from "../../src/app/client-bundle.js";

/**
 * One Talk client (issue 36): the talk page and the console speak the
 * protocol only through src/client, served built as /lib/talk-client.js.
 * A page that opens its own socket or writes its own request frames again
 * fails here.
 */

const WEB = join(process.cwd(), "web");

function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return scripts(path);
    return entry.name.endsWith(".js") ? [path] : [];
  });
}

describe("one Talk client for the pages", () => {
  it("no page script opens a WebSocket or builds request or response frames itself", () => {
    const offenders: string[] = [];
    for (const file of scripts(WEB)) {
      const text = readFileSync(file, "utf8");
      for (const [what, pattern] of [
        ["a WebSocket", /\bWebSocket\b/],
        ["a request frame", /type:\s*["']req["']/],
        ["a frame parser", /\.type\s*===\s*["'](res|event)["']/],
        ["a join with afterSeq", /\bafterSeq\b/],
      ] as const) {
        if (pattern.test(text)) offenders.push(`${relative(process.cwd(), file)}: ${what}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("the talk page and the console import the served client", () => {
    expect(readFileSync(join(WEB, "app.js"), "utf8")).toMatch(/from "\.\/lib\/talk-client\.js"/);
    expect(readFileSync(join(WEB, "console", "console.js"), "utf8")).toMatch(
      /from "\.\.\/lib\/talk-client\.js"/,
    );
  });

  it("the browser build of src/client is one self-contained module with the client, the session link and the error", async () => {
    const text = await buildClientBundle();
    expect(text).not.toMatch(/^\s*import\b/m);
    expect(text).not.toMatch(/\brequire\(/);
    const exported = /export\s*\{([^}]*)\}/.exec(text)?.[1] ?? "";
    expect(
      exported.split(",").map((name) =>
        name
          .trim()
          .split(/\s+as\s+/)
          .pop(),
      ),
    ).toEqual(expect.arrayContaining(["TalkClient", "SessionLink", "TalkError"]));
    // The browser's socket, with the token as the bearer subprotocol; not the ws package.
    expect(text).toContain("bearer.");
    expect(text).not.toMatch(/from\s+["']ws["']/);
  }, 60_000);
});
