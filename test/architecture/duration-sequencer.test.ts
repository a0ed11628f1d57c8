import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import DurationSequencer from "../support/duration-sequencer.js";
import durations from "../support/file-durations.json" with { type: "json" };

const ROOT = join(import.meta.dirname, "..", "..");

/** The part of a specification the sequencer reads: the file and its project's name. */
function spec(path: string, project: string): TestSpecification {
  return { moduleId: join(ROOT, path), project: { name: project } } as unknown as TestSpecification;
}

describe("the suite's file order", () => {
  it("keeps each project's files together, the project with the most time first, longest first within it", async () => {
    const table = durations as Record<string, number>;
    const known = (prefix: string): string[] => Object.keys(table).filter((p) => p.startsWith(prefix));
    const unit = known("src/").slice(0, 6);
    const integration = known("test/integration/").slice(0, 6);
    // Interleaved as the file system might list them.
    const files = unit.flatMap((u, i) => [spec(u, "unit"), spec(integration[i]!, "integration")]);
    files.push(spec("test/integration/no-such-file-yet.test.ts", "integration-isolated"));
    const sequencer = new DurationSequencer({ config: { root: ROOT } } as unknown as Vitest);

    const order = (await sequencer.sort(files)).map(
      (s) => `${s.project.name} ${s.moduleId.slice(ROOT.length + 1)}`,
    );

    const projects = order.map((line) => line.split(" ")[0]);
    // One switch between projects per boundary: a worker's process is kept only for its own project's next file.
    expect(projects.filter((p, i) => i > 0 && p !== projects[i - 1])).toHaveLength(2);
    expect(projects[0]).toBe("integration");
    for (const name of ["integration", "unit"]) {
      const times = order.filter((l) => l.startsWith(`${name} `)).map((l) => table[l.split(" ")[1]!]!);
      expect(times).toEqual([...times].sort((a, b) => b - a));
    }
  });
});
