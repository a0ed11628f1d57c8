import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { importCycles, readImportGraph, upwardArrows } from "./layers.js";

/**
 * The shape of the source tree, for before/after notes: files over 400
 * lines, functions over 80 lines, import cycles, arrows that run back up the
 * layers. Tests (`*.test.ts`) are left out unless --tests is given.
 *
 *   node --import tsx scripts/code-shape.ts [root] [--tests]
 */

const FILE_LINES = 400;
const FUNCTION_LINES = 80;

export interface LongFunction {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** Functions, methods, constructors, accessors and arrow functions longer than `limit` lines. */
export function longFunctions(file: string, source: string, limit = FUNCTION_LINES): LongFunction[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > limit) out.push({ file, line: start + 1, name: functionName(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function functionName(node: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return `${className(node)}constructor`;
  if (node.name && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)))
    return `${className(node)}${node.name.text}`;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && (ts.isCallExpression(parent) || ts.isNewExpression(parent)))
    return `(callback of ${ts.isNewExpression(parent) ? "new " : ""}${parent.expression.getText().slice(0, 40)})`;
  return "(anonymous)";
}

/** Lines as `wc -l` counts them. */
function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function className(node: ts.Node): string {
  const parent = node.parent;
  return parent && ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : "";
}

function main(): void {
  const args = process.argv.slice(2);
  const withTests = args.includes("--tests");
  const root = resolve(args.find((a) => !a.startsWith("--")) ?? ".");
  const graph = readImportGraph(root);
  const files = graph.files.filter((f) => withTests || !f.endsWith(".test.ts"));

  const sizes = files
    .map((file) => ({ file, lines: lineCount(readFileSync(join(root, file), "utf8")) }))
    .filter((f) => f.lines > FILE_LINES)
    .sort((a, b) => b.lines - a.lines);
  console.log(`Files over ${FILE_LINES} lines: ${sizes.length}`);
  for (const f of sizes) console.log(`  ${f.lines}  ${f.file}`);

  const functions = files
    .flatMap((file) => longFunctions(file, readFileSync(join(root, file), "utf8")))
    .sort((a, b) => b.lines - a.lines);
  console.log(`\nFunctions over ${FUNCTION_LINES} lines: ${functions.length}`);
  for (const f of functions) console.log(`  ${f.lines}  ${f.file}:${f.line}  ${f.name}`);

  const cycles = importCycles(graph.edges);
  console.log(`\nImport cycles: ${cycles.length}`);
  for (const c of cycles) console.log(`  ${c.join(" <-> ")}`);

  const up = [...new Set(upwardArrows(graph.edges, !withTests))];
  console.log(`\nArrows that run back up the layers: ${up.length}`);
  for (const a of up) console.log(`  ${a}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
