/**
 * Static pages served as files: the browser talk page at `/` (web/), the
 * operations console at `/console/` the same way. No bundler: plain ES
 * modules, stylesheets and images, read once when the plugin registers.
 *
 * - Every regular file of the folder (symbolic links are skipped) becomes one
 *   exact route, so a request can only name a file that was there at
 *   start-up: no path is ever joined from the URL (no directory traversal,
 *   no symlink escape, no dotfiles).
 * - Content types from a fixed table; a file of any other kind is not served.
 * - `Cache-Control: no-cache` with a strong ETag: browsers revalidate and get
 *   `304` until the server runs new files.
 * - A Content-Security-Policy on every answer (scripts, styles, workers and
 *   sockets from this origin only), `nosniff`, no framing, no referrer.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { TalkError } from "../core/index.js";

/** What the plugin serves and how. */
export interface StaticPagesOptions {
  /** Absolute folder whose files are served (read once, at registration). */
  root: string;
  /** URL prefix ending in "/": "/" or "/console/". Its `index.html` answers the prefix itself. */
  prefix: string;
  /** Content-Security-Policy of every answer. Default STATIC_PAGES_CSP. */
  csp?: string;
  /** Largest file served, bytes. Default 2 MiB: these are pages, not downloads. */
  maxFileBytes?: number;
  /** Folders directly under `root` left out (served by another plugin under their own prefix). */
  exclude?: readonly string[];
}

/** Same-origin everything: the page's modules, its worklet, its stylesheet, and its socket to /talk. */
export const STATIC_PAGES_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The kinds of file a page is made of. */
export const STATIC_CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".webmanifest": "application/manifest+json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
});

const DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024;
/** A path segment a page may use: no dotfiles, nothing a URL would have to escape. */
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One file, as served. */
export interface StaticFile {
  readonly urlPath: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
}

/**
 * The files of `root` as URL path -> file, with `prefix` in front. Skips
 * dotfiles, unknown kinds and tests (`*.test.*`); a folder that cannot be
 * read, or a file over the size limit, is `config_invalid` (at start-up).
 */
export function collectStaticFiles(options: StaticPagesOptions): Map<string, StaticFile> {
  const { root, prefix } = options;
  if (!prefix.startsWith("/") || !prefix.endsWith("/")) {
    throw new TalkError("config_invalid", `static pages: prefix "${prefix}" must start and end with "/"`);
  }
  const max = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const files = new Map<string, StaticFile>();
  const excluded = new Set((options.exclude ?? []).map((name) => join(root, name)));
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (err) {
      throw new TalkError("config_invalid", `static pages: cannot read ${dir}`, { cause: err });
    }
    for (const name of names) {
      if (!SAFE_SEGMENT.test(name) || name.includes(".test.")) continue;
      const path = join(dir, name);
      // lstat: a symbolic link is never followed (it could point anywhere).
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        if (!excluded.has(path)) walk(path);
        continue;
      }
      const contentType = STATIC_CONTENT_TYPES[extname(name).toLowerCase()];
      if (!stat.isFile() || contentType === undefined) continue;
      if (stat.size > max) {
        throw new TalkError("config_invalid", `static pages: ${path} is larger than ${max} bytes`);
      }
      const body = readFileSync(path);
      const urlPath = prefix + relative(root, path).split(sep).join("/");
      const etag = etagOf(body);
      files.set(urlPath, Object.freeze({ urlPath, body, contentType, etag }));
    }
  };
  walk(root);
  return files;
}

/**
 * Serves the files of `options.root` under `options.prefix`, one exact GET
 * (and HEAD) route per file, `index.html` also at the prefix. A route another
 * plugin already holds fails registration (start-up), never a request.
 */
export function staticPagesPlugin(options: StaticPagesOptions): FastifyPluginAsync {
  return async (app) => {
    const files = collectStaticFiles(options);
    const csp = options.csp ?? STATIC_PAGES_CSP;
    const serve =
      (file: StaticFile) =>
      (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
        sendStaticFile(file, request, reply, csp);
    for (const file of files.values()) {
      app.get(file.urlPath, serve(file));
      if (file.urlPath === `${options.prefix}index.html`) {
        app.get(options.prefix, serve(file));
        // "/console" without its slash: relative module URLs need the slash.
        if (options.prefix !== "/") {
          app.get(options.prefix.slice(0, -1), async (_request, reply) =>
            reply.redirect(options.prefix, 308),
          );
        }
      }
    }
  };
}

/** Answers with one file as every static page is answered: the CSP, nosniff, revalidation, 304 on a match. */
export async function sendStaticFile(
  file: StaticFile,
  request: FastifyRequest,
  reply: FastifyReply,
  csp = STATIC_PAGES_CSP,
): Promise<FastifyReply> {
  reply
    .header("content-security-policy", csp)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("cache-control", "no-cache")
    .header("etag", file.etag);
  if (matchesEtag(request.headers["if-none-match"], file.etag)) return reply.code(304).send();
  return reply.type(file.contentType).send(file.body);
}

/** A strong ETag of a body. */
export function etagOf(body: Buffer): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/** If-None-Match: `*`, one tag or a list, weak or strong (RFC 9110 weak comparison). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(",")
    .map((t) => t.trim().replace(/^W\//, ""))
    .some((t) => t === "*" || t === etag);
}
