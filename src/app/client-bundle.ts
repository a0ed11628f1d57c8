/**
 * The Talk client (src/client) as the talk page and the console load it: one
 * browser module, bundled by esbuild from src/client/browser.ts when first
 * asked for and kept in memory for the life of the process, so what a page
 * runs is always built from the sources the server started with (nothing is
 * written to disk, nothing to rebuild by hand, nothing stale).
 *
 * Two things make the server's client a browser module:
 * - `node-socket.ts` (the `ws` package) is swapped for `browser-socket.ts`
 *   (the page's WebSocket, the token as the `bearer.<token>` subprotocol);
 * - every module is bundled as free of side effects and every package and
 *   Node built-in kept outside: only what the client really uses is kept
 *   (error codes, frame types), and a bundle that still imports anything
 *   from outside is refused rather than served broken.
 */
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";
import { TalkError } from "../core/index.js";
import { etagOf, sendStaticFile, type GatewayServer, type StaticFile } from "../gateway/index.js";

/** Where the pages import it from: `./lib/talk-client.js` (the talk page), `../lib/talk-client.js` (the console). */
export const CLIENT_BUNDLE_PATH = "/lib/talk-client.js";

const ENTRY = fileURLToPath(new URL("../client/browser.ts", import.meta.url));
const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/** Builds the browser module. Rejects with `internal` when it cannot be built or imports anything. */
export async function buildClientBundle(): Promise<string> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
    legalComments: "none",
    plugins: [browserSocket(), sideEffectFree()],
  });
  const text = result.outputFiles[0]?.text ?? "";
  const imports = text.match(/^\s*(?:import|export)\s[^;]*\bfrom\s*["'][^"']+["']/gm) ?? [];
  if (/^\s*import\s*["']/m.test(text) || imports.length > 0) {
    throw new TalkError(
      "internal",
      `the browser Talk client still imports from outside: ${imports.join("; ")}`,
    );
  }
  return `// talkgate's Talk client (src/client), bundled for the browser by src/app/client-bundle.ts.\n${text}`;
}

/** Serves the bundle at CLIENT_BUNDLE_PATH, built on the first request (and again after a failed build). */
export function registerClientBundle(gateway: GatewayServer): void {
  let built: Promise<StaticFile> | undefined;
  const load = (): Promise<StaticFile> => {
    built ??= buildClientBundle().then((text) => {
      const body = Buffer.from(text, "utf8");
      return {
        urlPath: CLIENT_BUNDLE_PATH,
        body,
        contentType: "text/javascript; charset=utf-8",
        etag: etagOf(body),
      };
    });
    built.catch(() => (built = undefined));
    return built;
  };
  gateway.app.get(CLIENT_BUNDLE_PATH, async (request, reply) => sendStaticFile(await load(), request, reply));
}

/** node-socket.ts -> browser-socket.ts, beside it. */
function browserSocket(): Plugin {
  return {
    name: "talk-client-browser-socket",
    setup(build) {
      build.onResolve({ filter: /(^|\/)node-socket\.js$/ }, (args) => ({
        path: join(dirname(args.importer), "browser-socket.ts"),
      }));
    },
  };
}

/** Every module side-effect free, packages and built-ins external: unused imports vanish with what they pull. */
function sideEffectFree(): Plugin {
  return {
    name: "talk-client-side-effect-free",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === "inner" || args.kind === "entry-point") return undefined;
        if (BUILTINS.has(args.path) || !/^[./]/.test(args.path))
          return { path: args.path, external: true, sideEffects: false };
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: "inner",
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        return { ...resolved, sideEffects: false };
      });
    },
  };
}
