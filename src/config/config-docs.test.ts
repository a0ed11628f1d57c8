import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configSchema } from "./config-schema.js";
import { schemaFields } from "./redact.js";

/** The schema's keys as this page writes them: a record's key `<id>`, an array's items under the array. */
function schemaKeys(): string[] {
  const keys = schemaFields(configSchema).map((f) => {
    const path = f.path.replace(/\.\*/g, ".<id>");
    const array = path.indexOf(".[]");
    return array === -1 ? path : path.slice(0, array);
  });
  return [...new Set(keys)];
}

const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");

/**
 * The keys a table row's first cell names: "`a.b.c` / `.d`" is a.b.c and a.b.d, "`x.{y,z}`" is x.y and
 * x.z, any `<placeholder>` is `<id>`.
 */
function keysOfCell(cell: string): string[] {
  const keys: string[] = [];
  let first: string | undefined;
  for (const part of cell.split(" / ")) {
    const match = /^`([^`]+)`$/.exec(part.trim());
    if (!match) continue;
    let key = match[1]!.replace(/<[^>]+>/g, "<id>").replace(/\[\]$/, "");
    if (key.startsWith(".") && first !== undefined) key = first.slice(0, first.lastIndexOf(".")) + key;
    else first = key;
    const alternatives = /\{([^}]+)\}/.exec(key);
    if (alternatives) {
      for (const alt of alternatives[1]!.split(",")) {
        keys.push(
          key.slice(0, alternatives.index) + alt + key.slice(alternatives.index + alternatives[0].length),
        );
      }
    } else keys.push(key);
  }
  return keys;
}

interface Table {
  header: string;
  rows: string[][];
  line: number;
}

function tables(text: string): Table[] {
  const found: Table[] = [];
  let current: Table | undefined;
  text.split("\n").forEach((line, index) => {
    if (!line.startsWith("|")) {
      current = undefined;
      return;
    }
    const cells = line
      .slice(1, line.endsWith("|") ? -1 : undefined)
      .split("|")
      .map((c) => c.trim());
    if (!current) {
      current = { header: cells.join(" | "), rows: [], line: index + 1 };
      found.push(current);
    } else if (!/^-+$/.test(cells[0]!)) current.rows.push(cells);
  });
  return found;
}

describe("docs/configuration.md", () => {
  const keyTables = tables(doc).filter((t) => t.header === "key | default | meaning");
  const documented = new Set(keyTables.flatMap((t) => t.rows.flatMap((row) => keysOfCell(row[0]!))));

  it("names every key of the configuration schema in a key table", () => {
    const missing = schemaKeys().filter((key) => {
      // A record keyed by name or number (agent.transferTargets.<id>, telephony.numbers.<id>.mode) may be
      // documented as the record, its entry's keys in the meaning.
      const record = key.includes(".<id>") ? key.slice(0, key.indexOf(".<id>")) : key;
      return !documented.has(key) && !documented.has(record) && !documented.has(`${record}.<id>`);
    });
    expect(missing).toEqual([]);
  });

  it("has whole tables: every row of three cells, no key twice", () => {
    const seen = new Map<string, number>();
    for (const table of keyTables) {
      for (const row of table.rows) {
        expect(row, `a row of the table at line ${table.line}: ${row.join(" | ")}`).toHaveLength(3);
        expect(row[0], `a key cell of the table at line ${table.line}`).toMatch(/^`/);
        for (const key of keysOfCell(row[0]!)) {
          seen.set(key, (seen.get(key) ?? 0) + 1);
        }
      }
    }
    expect([...seen].filter(([, count]) => count > 1).map(([key]) => key)).toEqual([]);
  });
});
