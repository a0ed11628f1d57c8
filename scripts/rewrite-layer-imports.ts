import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import * as prettier from "prettier";
import ts from "typescript";
import { importCycles, layerIndex, layerOf, readImportGraph } from "./layers.js";

/**
 * Codemod: imports across layers go through the target layer's index.ts.
 *
 *   node --import tsx scripts/rewrite-layer-imports.ts [root] [--dry-run]
 *
 * For every static import or `export ... from` in a non-test file of src/
 * that reaches into another layer's file (other than its index.ts and its
 * `testing/` helpers), the specifier is rewritten to that layer's index.ts,
 * and every name it takes is added to the index when missing (`export type`
 * for types, so `verbatimModuleSyntax` holds), a new index.ts being created
 * for a layer that has none. Names are matched by symbol with the type
 * checker, so an index that already offers a name (directly or through
 * `export *`) is reused. Left as they are, and listed: dynamic `import()`
 * (kept lazy), namespace, default and side-effect imports, `export *`, and a
 * declaration any of whose names the index already offers for another thing.
 * Within a layer, files keep importing each other directly. After writing,
 * the files written are formatted with the project's Prettier settings and
 * the import graph is checked for cycles.
 */

interface IndexExport {
  module: string;
  isType: boolean;
  symbol: ts.Symbol;
}

interface Rewrite {
  file: string;
  start: number;
  end: number;
  text: string;
}

const posix = (path: string): string => path.split(sep).join("/");

function moduleSpecifier(fromFile: string, toFile: string): string {
  const rel = posix(relative(dirname(fromFile), toFile)).replace(/\.ts$/, ".js");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

function loadProgram(root: string): ts.Program {
  const configPath = join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dryRun = args.includes("--dry-run");
  const root = resolve(args.find((a) => !a.startsWith("--")) ?? ".");
  const program = loadProgram(root);
  const checker = program.getTypeChecker();
  const repo = (abs: string): string => posix(relative(root, abs));

  const original = (symbol: ts.Symbol): ts.Symbol =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const exportsOf = (file: string): Map<string, ts.Symbol> => {
    const sf = program.getSourceFile(join(root, file));
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    const out = new Map<string, ts.Symbol>();
    if (moduleSymbol) for (const s of checker.getExportsOfModule(moduleSymbol)) out.set(s.name, original(s));
    return out;
  };

  const indexExports = new Map<string, Map<string, ts.Symbol>>();
  const planned = new Map<string, Map<string, IndexExport>>();
  const rewrites: Rewrite[] = [];
  const left: string[] = [];

  for (const sf of program.getSourceFiles()) {
    const file = repo(sf.fileName);
    const from = layerOf(file);
    if (!from || file.endsWith(".test.ts") || sf.isDeclarationFile) continue;
    const note = (node: ts.Node, why: string): void => {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      left.push(`${file}:${line}: ${why}`);
    };
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        const target = crossLayerTarget(file, node.arguments[0].text);
        if (target) note(node, `dynamic import of ${target} (kept lazy)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);

    for (const stmt of sf.statements) {
      if (!(ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt))) continue;
      const spec = stmt.moduleSpecifier;
      if (!spec || !ts.isStringLiteral(spec)) continue;
      const target = crossLayerTarget(file, spec.text);
      if (!target) continue;
      const layer = layerOf(target);
      const index = layer && layerIndex(layer);
      if (!index || target === index || target.includes("/testing/")) continue;

      const names: string[] = [];
      if (ts.isImportDeclaration(stmt)) {
        const clause = stmt.importClause;
        if (!clause) {
          note(stmt, `side-effect import of ${target}`);
          continue;
        }
        if (clause.name) {
          note(stmt, `default import from ${target}`);
          continue;
        }
        const bindings = clause.namedBindings;
        if (!bindings || !ts.isNamedImports(bindings)) {
          note(stmt, `namespace import of ${target}`);
          continue;
        }
        for (const el of bindings.elements) names.push((el.propertyName ?? el.name).text);
      } else {
        if (!stmt.exportClause || !ts.isNamedExports(stmt.exportClause)) {
          note(stmt, `export * from ${target}`);
          continue;
        }
        for (const el of stmt.exportClause.elements) names.push((el.propertyName ?? el.name).text);
      }

      if (!indexExports.has(index))
        indexExports.set(index, existsSync(join(root, index)) ? exportsOf(index) : new Map());
      const offered = indexExports.get(index) as Map<string, ts.Symbol>;
      const adds = planned.get(index) ?? new Map<string, IndexExport>();
      const fromTarget = exportsOf(target);
      const additions: [string, IndexExport][] = [];
      let conflict = "";
      for (const name of names) {
        const symbol = fromTarget.get(name);
        if (!symbol) {
          conflict = `${name} not found in ${target}`;
          break;
        }
        const existing = offered.get(name) ?? adds.get(name)?.symbol;
        if (existing === symbol) continue;
        if (existing) {
          conflict = `${index} already offers another ${name}`;
          break;
        }
        const isType = (symbol.flags & ts.SymbolFlags.Value) === 0;
        additions.push([name, { module: moduleSpecifier(index, target), isType, symbol }]);
      }
      if (conflict) {
        note(stmt, conflict);
        continue;
      }
      for (const [name, add] of additions) adds.set(name, add);
      planned.set(index, adds);
      rewrites.push({
        file,
        start: spec.getStart(sf),
        end: spec.getEnd(),
        text: JSON.stringify(moduleSpecifier(file, index)),
      });
    }
  }

  const byFile = new Map<string, Rewrite[]>();
  for (const r of rewrites) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  console.log(`Rewritten imports: ${rewrites.length} in ${byFile.size} files`);
  for (const [index, adds] of planned) if (adds.size) console.log(`  ${index}: +${adds.size} re-exports`);
  console.log(`Left as they are: ${left.length}`);
  for (const l of left) console.log(`  ${l}`);
  if (dryRun) return;

  const written = new Set<string>();
  for (const [file, list] of byFile) {
    written.add(file);
    let text = readFileSync(join(root, file), "utf8");
    for (const r of list.sort((a, b) => b.start - a.start))
      text = text.slice(0, r.start) + r.text + text.slice(r.end);
    writeFileSync(join(root, file), text);
  }
  for (const [index, adds] of planned) {
    if (adds.size === 0) continue;
    const path = join(root, index);
    const layer = index.split("/")[1];
    let text = existsSync(path)
      ? readFileSync(path, "utf8")
      : `// The ${layer} layer's public face: what other layers import.\n`;
    if (!text.endsWith("\n")) text += "\n";
    const groups = new Map<string, string[]>();
    for (const [name, add] of adds) {
      const key = `${add.isType ? "type " : ""}${add.module}`;
      groups.set(key, [...(groups.get(key) ?? []), name]);
    }
    text += "// Offered to other layers (scripts/rewrite-layer-imports.ts).\n";
    for (const [key, names] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
      const isType = key.startsWith("type ");
      const module = isType ? key.slice(5) : key;
      text += `export ${isType ? "type " : ""}{ ${names.sort().join(", ")} } from ${JSON.stringify(module)};\n`;
    }
    writeFileSync(path, text);
    written.add(index);
  }
  for (const file of written) {
    const path = join(root, file);
    const options = (await prettier.resolveConfig(path)) ?? {};
    writeFileSync(path, await prettier.format(readFileSync(path, "utf8"), { ...options, filepath: path }));
  }

  const cycles = importCycles(readImportGraph(root).edges);
  console.log(`Import cycles after the rewrite: ${cycles.length}`);
  for (const c of cycles) console.log(`  ${c.join(" <-> ")}`);
  if (cycles.length > 0) process.exitCode = 1;
}

/** The repo-relative .ts file a relative specifier names when it lies in another layer. */
function crossLayerTarget(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = posix(join(dirname(file), specifier)).replace(/\.js$/, ".ts");
  const a = layerOf(file);
  const b = layerOf(target);
  return a && b && a !== b ? target : undefined;
}

await main();
