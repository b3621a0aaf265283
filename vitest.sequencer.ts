/**
 * Longest spec files first, from durations checked in (`vitest.durations.json`), so that a project
 * running two files at a time does not end with one long file running alone. Vitest's own order
 * uses the durations of this machine's earlier runs (node_modules/.vite), which a clean clone (CI)
 * does not have: it then falls back to file size, and a short file that runs long (a cluster spec
 * of 110 lines that waits 80 s for its brokers) started last and ran alone.
 *
 * Within each project the files are ordered by their recorded seconds, longest first; a file with
 * no record (a new spec) counts as NEW_FILE_SECONDS. Projects keep vitest's order (groupOrder).
 * `npm run test:durations` rewrites the record from the last runs of this machine.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What a file with no recorded duration counts as, in seconds: about the median int spec. */
export const NEW_FILE_SECONDS = 20;

/** Seconds per spec file (path from the repository root), as `npm run test:durations` wrote them. */
export function recordedDurations(
  file = new URL('./vitest.durations.json', import.meta.url),
): Map<string, number> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { seconds?: Record<string, number> };
    return new Map(Object.entries(parsed.seconds ?? {}));
  } catch {
    return new Map();
  }
}

export class DurationSequencer extends BaseSequencer {
  private readonly seconds = recordedDurations();

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    // Each project where vitest put its first file: projects stay in vitest's order.
    const projectRank = new Map<string, number>();
    ordered.forEach((spec, i) => {
      if (!projectRank.has(spec.project.name)) projectRank.set(spec.project.name, i);
    });
    const secondsOf = (spec: TestSpecification): number =>
      this.seconds.get(relative(spec.project.config.root, spec.moduleId)) ?? NEW_FILE_SECONDS;
    return [...ordered].sort(
      (a, b) =>
        projectRank.get(a.project.name)! - projectRank.get(b.project.name)! || secondsOf(b) - secondsOf(a),
    );
  }
}
