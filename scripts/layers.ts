import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

/**
 * The layers of ARCHITECTURE.md as data, the import graph of src/ as data,
 * and the checks run on them (test/architecture/layering.test.ts,
 * scripts/code-shape.ts, scripts/rewrite-layer-imports.ts). Every check is a
 * pure function of a graph or a source text, so the tests can plant a
 * violation in a small synthetic input and see it reported.
 */

export type Layer =
  | "composition"
  | "gateway"
  | "telephony"
  | "meetings"
  | "ops"
  | "client"
  | "providers"
  | "cluster"
  | "config"
  | "voice"
  | "core"
  | "codecs";

/**
 * Which layers each layer may import (besides itself). Dependencies point
 * down: composition -> client -> surfaces -> implementers and the voice
 * engine -> config -> the Talk model (core) -> edges (codecs). Providers and
 * cluster implement core's contracts; the voice engine (media legs,
 * pipelines, speech, faults, recording) stands on core beside them, neither
 * importing the other; core imports only codecs; codecs import nothing above them.
 */
export const ALLOWED_ARROWS: Readonly<Record<Layer, readonly Layer[]>> = Object.freeze({
  composition: [
    "gateway",
    "telephony",
    "meetings",
    "ops",
    "client",
    "providers",
    "cluster",
    "voice",
    "config",
    "core",
    "codecs",
  ],
  // The Talk client SDK speaks the gateway's public wire protocol (gateway/protocol).
  client: ["gateway", "core", "codecs"],
  // Surfaces: the gateway's surface context and method registry are what telephony and meetings plug into.
  gateway: ["cluster", "voice", "config", "core", "codecs"],
  telephony: ["gateway", "cluster", "voice", "config", "core", "codecs"],
  meetings: ["gateway", "cluster", "voice", "config", "core", "codecs"],
  // Operations (admin API, metrics, traces, usage ledger, console): a surface over the others' events.
  ops: ["gateway", "cluster", "voice", "config", "core", "codecs"],
  providers: ["core", "codecs"],
  cluster: ["core", "codecs"],
  // The voice engine: media legs, pipelines, speech, faults, recording, on the Talk model's contracts.
  voice: ["core", "codecs"],
  config: ["core", "codecs"],
  core: ["codecs"],
  codecs: [],
});

/** Tiers top to bottom; an arrow to a lower tier number than its source's runs back up. */
export const LAYER_TIER: Readonly<Record<Layer, number>> = Object.freeze({
  composition: 0,
  client: 1,
  gateway: 2,
  telephony: 2,
  meetings: 2,
  ops: 2,
  providers: 3,
  cluster: 3,
  voice: 3,
  config: 4,
  core: 5,
  codecs: 6,
});

const LAYERS = Object.keys(LAYER_TIER) as Layer[];

/** The carriers, platforms and vendors core may not name in code. */
export const VENDOR_WORDS: readonly string[] = [
  "twilio",
  "telnyx",
  "plivo",
  "vonage",
  "meet",
  "zoom",
  "teams",
  "openai",
  "browser",
  "chromium",
];

/** An import of one project file by another: `from` and `to` relative to the repository root, posix. */
export interface ImportEdge {
  from: string;
  to: string;
  /** The specifier as written. */
  specifier: string;
  /** `import("...")`, not a static import or re-export. */
  dynamic: boolean;
}

/** The layer of a file under src/ (posix path relative to the repository root), undefined outside src/. */
export function layerOf(file: string): Layer | undefined {
  const parts = file.split("/");
  if (parts[0] !== "src" || parts.length < 2) return undefined;
  if (parts.length === 2) return /^app[\w-]*\.ts$/.test(parts[1] ?? "") ? "composition" : undefined;
  // src/app/* (the composition root's parts) and src/cli/* (the talkgate command) are the composition layer.
  const top = parts[1] === "cli" || parts[1] === "app" ? "composition" : parts[1];
  return LAYERS.includes(top as Layer) ? (top as Layer) : undefined;
}

/** Every .ts file under `dir` (absolute paths), tests included. */
export function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

const posix = (path: string): string => path.split(sep).join("/");

/**
 * The module specifiers of a source: static imports (value and type),
 * `export ... from`, and dynamic `import()` with a string literal.
 */
export function importSpecifiers(source: string): { specifier: string; dynamic: boolean }[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: { specifier: string; dynamic: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push({ specifier: node.moduleSpecifier.text, dynamic: false });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push({ specifier: node.arguments[0].text, dynamic: true });
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal))
        out.push({ specifier: arg.literal.text, dynamic: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** Resolves a relative `.js` specifier of `from` (posix, repo-relative) to the .ts file it names. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = posix(join(dirname(from), specifier));
  return target.replace(/\.js$/, ".ts");
}

/** The import graph of every .ts file under `root`/src (tests included). */
export function readImportGraph(root: string): { files: string[]; edges: ImportEdge[] } {
  const files = tsFiles(join(root, "src")).map((f) => posix(relative(root, f)));
  return { files, edges: graphOf(files, (f) => readFileSync(resolve(root, f), "utf8")) };
}

/** The import edges among `files`, reading each with `read` (synthetic graphs in tests). */
export function graphOf(files: readonly string[], read: (file: string) => string): ImportEdge[] {
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const { specifier, dynamic } of importSpecifiers(read(from))) {
      const to = resolveSpecifier(from, specifier);
      if (to && known.has(to)) edges.push({ from, to, specifier, dynamic });
    }
  }
  return edges;
}

/**
 * Arrows the table does not allow: "from -> to (fromLayer -> toLayer)".
 * Tests beside the code (`*.test.ts`) are not part of a layer's dependencies
 * (nothing imports them) and are exempt: some use real engines from another
 * layer, as STYLE.md asks.
 */
export function layerViolations(
  edges: readonly ImportEdge[],
  allowed: Readonly<Record<Layer, readonly Layer[]>> = ALLOWED_ARROWS,
): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (e.from.endsWith(".test.ts")) continue;
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (!a || !b || a === b) continue;
    if (!allowed[a].includes(b)) out.push(`${e.from} -> ${e.to} (${a} -> ${b})`);
  }
  return out;
}

/** Arrows from a layer to one in a higher tier (the figure for the note); tests included unless `skipTests`. */
export function upwardArrows(edges: readonly ImportEdge[], skipTests = false): string[] {
  const rank = (l: Layer): number => LAYER_TIER[l];
  const out: string[] = [];
  for (const e of edges) {
    if (skipTests && e.from.endsWith(".test.ts")) continue;
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (a && b && a !== b && rank(b) < rank(a)) out.push(`${e.from} -> ${e.to} (${a} -> ${b})`);
  }
  return out;
}

/** Import cycles: each strongly connected component of more than one file (or a file importing itself). */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    const list = next.get(e.from) ?? [];
    list.push(e.to);
    next.set(e.from, list);
    if (!next.has(e.to)) next.set(e.to, []);
  }
  // Tarjan's algorithm, iterative so that deep graphs do not overflow the stack.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  for (const start of next.keys()) {
    if (indices.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    indices.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; i: number };
      const succ = next.get(frame.node) ?? [];
      if (frame.i < succ.length) {
        const w = succ[frame.i++] as string;
        if (!indices.has(w)) {
          indices.set(w, index);
          low.set(w, index++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, indices.get(w) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent)
        low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === indices.get(frame.node)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.node);
        const selfLoop = component.length === 1 && succ.includes(frame.node);
        if (component.length > 1 || selfLoop) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** The index.ts of a layer, where it has one folder (composition has none). */
export function layerIndex(layer: Layer): string | undefined {
  return layer === "composition" ? undefined : `src/${layer}/index.ts`;
}

/**
 * Imports across layers that bypass the target layer's index.ts. Exempt:
 * tests (`*.test.ts`) and a layer's `testing/` helpers (not part of its public
 * face), and dynamic `import()`, which names one module on purpose to load it
 * lazily (through an index that others import statically it would load
 * eagerly). Not yet enforced on the real tree (see
 * scripts/rewrite-layer-imports.ts).
 */
export function deepImports(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (!a || !b || a === b || e.dynamic || e.from.endsWith(".test.ts") || e.to.includes("/testing/"))
      continue;
    if (e.to !== layerIndex(b)) out.push(`${e.from} -> ${e.to}`);
  }
  return out;
}

/**
 * Where a source names a carrier, platform or vendor in code: identifiers
 * (split at camelCase, snake_case and digits, so `OpenAIRealtime` and
 * `twilio_sid` hit and `meetingId` does not), string and template text
 * (whole words). Comments are not code and are not read.
 */
export function vendorNames(source: string, words: readonly string[] = VENDOR_WORDS): string[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const hits: string[] = [];
  const wanted = words.map((w) => w.toLowerCase());
  const check = (text: string, parts: string[]): void => {
    // A vendor name hits when it spans one or more whole parts (`Open`+`AI` is `openai`).
    for (let i = 0; i < parts.length; i++) {
      let joined = "";
      for (let j = i; j < parts.length; j++) {
        joined += (parts[j] as string).toLowerCase();
        if (wanted.includes(joined)) hits.push(`${joined} in ${JSON.stringify(text)}`);
        if (joined.length >= 16) break;
      }
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      const text = node.text.replace(/^#/, "");
      check(text, identifierParts(text));
    } else if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      for (const word of node.text.split(/[^A-Za-z0-9]+/).filter(Boolean))
        check(node.text, identifierParts(word));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...new Set(hits)];
}

/** `OpenAIRealtime_v2` -> ["Open", "AI", "Realtime", "v", "2"]. */
export function identifierParts(identifier: string): string[] {
  return identifier
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])([0-9])/g, "$1 $2")
    .replace(/([0-9])([A-Za-z])/g, "$1 $2")
    .split(/[\s_$]+/)
    .filter(Boolean);
}
