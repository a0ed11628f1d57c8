import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TalkError } from "../core/index.js";
import { collectStaticFiles, STATIC_PAGES_CSP, staticPagesPlugin } from "./static-pages.js";

describe("static pages", () => {
  let dir: string;
  let outside: string;
  let app: FastifyInstance;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "talkgate-static-"));
    outside = mkdtempSync(join(tmpdir(), "talkgate-outside-"));
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>t</title>");
    writeFileSync(join(dir, "app.js"), "export const x = 1;");
    mkdirSync(join(dir, "css"));
    writeFileSync(join(dir, "css", "style.css"), "body{}");
    writeFileSync(join(dir, ".env"), "SECRET=1");
    writeFileSync(join(dir, "notes.ts"), "const y = 2;");
    writeFileSync(join(dir, "app.test.js"), "test");
    writeFileSync(join(outside, "secret.txt"), "classified-content");
    app = Fastify();
  });

  afterEach(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("serves each file with its content type, the CSP, nosniff and revalidation headers; index.html at the prefix", async () => {
    await app.register(staticPagesPlugin({ root: dir, prefix: "/" }));
    const page = await app.inject({ url: "/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toBe(STATIC_PAGES_CSP);
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.body).toContain("<title>t</title>");
    expect((await app.inject({ url: "/index.html" })).body).toBe(page.body);
    const js = await app.inject({ url: "/app.js" });
    expect(js.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await app.inject({ url: "/css/style.css" })).headers["content-type"]).toBe(
      "text/css; charset=utf-8",
    );
    const head = await app.inject({ method: "HEAD", url: "/app.js" });
    expect(head.statusCode).toBe(200);
  });

  it("answers 304 to a matching If-None-Match and 200 to a stale one", async () => {
    await app.register(staticPagesPlugin({ root: dir, prefix: "/" }));
    const first = await app.inject({ url: "/app.js" });
    const etag = String(first.headers["etag"]);
    expect(etag).toMatch(/^"[\w-]+"$/);
    const same = await app.inject({ url: "/app.js", headers: { "if-none-match": `W/"x", ${etag}` } });
    expect(same.statusCode).toBe(304);
    expect(same.body).toBe("");
    const stale = await app.inject({ url: "/app.js", headers: { "if-none-match": '"other"' } });
    expect(stale.statusCode).toBe(200);
  });

  it("serves nothing outside the files it found: no traversal, dotfiles, unknown kinds, tests or symlinks out", async () => {
    symlinkSync(outside, join(dir, "linked"));
    await app.register(staticPagesPlugin({ root: dir, prefix: "/" }));
    for (const url of [
      "/../package.json",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/css/../../etc/passwd",
      "/css/..%2f..%2fetc/passwd",
      "/.env",
      "/notes.ts",
      "/app.test.js",
      "/css/",
      "/missing.js",
      "/linked/secret.txt",
    ]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toMatch(/classified-content|SECRET=1|root:/);
    }
  });

  it("under a sub-prefix: index at /console/, /console redirects there", async () => {
    await app.register(staticPagesPlugin({ root: dir, prefix: "/console/" }));
    expect((await app.inject({ url: "/console/" })).statusCode).toBe(200);
    expect((await app.inject({ url: "/console/app.js" })).statusCode).toBe(200);
    const bare = await app.inject({ url: "/console" });
    expect(bare.statusCode).toBe(308);
    expect(bare.headers["location"]).toBe("/console/");
    expect((await app.inject({ url: "/app.js" })).statusCode).toBe(404);
  });

  it("a folder left out of the root is served by its own plugin under its prefix, without a clash", async () => {
    mkdirSync(join(dir, "console"));
    writeFileSync(join(dir, "console", "index.html"), "<!doctype html><title>c</title>");
    await app.register(staticPagesPlugin({ root: dir, prefix: "/", exclude: ["console"] }));
    await app.register(staticPagesPlugin({ root: join(dir, "console"), prefix: "/console/" }));
    expect((await app.inject({ url: "/console/" })).body).toContain("<title>c</title>");
    expect((await app.inject({ url: "/console/index.html" })).body).toContain("<title>c</title>");
    expect((await app.inject({ url: "/css/style.css" })).statusCode).toBe(200);
    expect([...collectStaticFiles({ root: dir, prefix: "/", exclude: ["console"] }).keys()]).not.toContain(
      "/console/index.html",
    );
  });

  it("refuses a bad prefix, an unreadable folder or an oversized file at start-up (config_invalid)", () => {
    const codeOf = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (err) {
        return err instanceof TalkError ? err.code : "other";
      }
      return undefined;
    };
    expect(codeOf(() => collectStaticFiles({ root: dir, prefix: "console" }))).toBe("config_invalid");
    expect(codeOf(() => collectStaticFiles({ root: join(dir, "nope"), prefix: "/" }))).toBe("config_invalid");
    expect(codeOf(() => collectStaticFiles({ root: dir, prefix: "/", maxFileBytes: 4 }))).toBe(
      "config_invalid",
    );
  });

  it("a route another plugin already holds fails registration, not a request", async () => {
    app.get("/app.js", async () => "taken");
    await expect(
      app.register(staticPagesPlugin({ root: dir, prefix: "/" })).then(() => app.ready()),
    ).rejects.toThrow();
  });
});
