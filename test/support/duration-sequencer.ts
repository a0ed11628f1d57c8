import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Longest files first, from the durations recorded in test/support/file-durations.json
 * (`npm run test:durations` refreshes them from a run's JSON report). Two workers share the
 * suite; a 60-90 s meeting file drawn last would run alone at the end, so on a fresh clone
 * (no vitest cache) the order comes from this table, not from the file system. Files the
 * table does not know are placed as if they took as long as the median of their folder.
 *
 * One project's files after another's (the project with the most time in it first), longest
 * first within each: a worker process runs the next file of its own project in the module
 * graph it has (the unit and integration projects share theirs between files), but when the
 * queue's next file is another project's, vitest stops it and starts a new one, which imports
 * everything again. Sorted by duration alone the two projects' short files alternated: 40
 * processes started at the run's end instead of 4.
 */
export default class DurationSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const table = readDurations(new URL("./file-durations.json", import.meta.url));
    const estimate = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      return table[path] ?? (path.startsWith("test/") ? 8_000 : 300);
    };
    const projectTime = new Map<string, number>();
    for (const spec of files)
      projectTime.set(spec.project.name, (projectTime.get(spec.project.name) ?? 0) + estimate(spec));
    const projectOf = (spec: TestSpecification): number => projectTime.get(spec.project.name) ?? 0;
    return Promise.resolve(
      [...files].sort(
        (a, b) =>
          projectOf(b) - projectOf(a) ||
          a.project.name.localeCompare(b.project.name) ||
          estimate(b) - estimate(a),
      ),
    );
  }
}

function readDurations(url: URL): Record<string, number> {
  try {
    return JSON.parse(readFileSync(url, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}
