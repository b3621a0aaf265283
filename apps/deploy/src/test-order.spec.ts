/**
 * The order the test runner starts spec files in (vitest.sequencer.ts): longest first within each
 * project, from the durations checked in, so a project that runs two files at a time never ends
 * with one long file alone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { DurationSequencer, NEW_FILE_SECONDS, recordedDurations } from '../../../vitest.sequencer.js';
import { REPO_ROOT } from './helm.js';

/** A spec file of `project` as the sequencer sees it (only the fields it reads). */
function spec(project: string, groupOrder: number, file: string): TestSpecification {
  return {
    moduleId: join(REPO_ROOT, file),
    project: { name: project, config: { root: REPO_ROOT, sequence: { groupOrder }, isolate: true } },
  } as unknown as TestSpecification;
}

/** A runner with no record of earlier runs, as in a clean clone. */
const freshRunner = { cache: { getTestSpecificationResult: () => undefined } } as unknown as Vitest;

describe('the test order', () => {
  const seconds = recordedDurations();

  it('has a recorded duration for every spec file that runs beside another', () => {
    expect(seconds.size).toBeGreaterThan(0);
    const missing = [...seconds.keys()].filter((file) => !existsSync(join(REPO_ROOT, file)));
    expect(missing, 'recorded files that no longer exist: npm run test:durations').toEqual([]);
  });

  it('starts the longest files of each project first, projects in their group order', async () => {
    const cluster = (file: string) => spec('cluster', 1, file);
    const files = [
      spec('serial', 2, 'tests/system/src/crash-unencodable.serial.int.spec.ts'),
      cluster('libs/transport-redis/src/redis-sentinel.cluster.int.spec.ts'),
      cluster('tests/system/src/cluster-kafka.cluster.int.spec.ts'),
      spec('parallel', 0, 'apps/deploy/src/release.spec.ts'),
      cluster('tests/system/src/cluster-nats.cluster.int.spec.ts'),
    ];
    const ordered = await new DurationSequencer(freshRunner).sort(files);
    expect(ordered.map((s) => s.project.name)).toEqual([
      'parallel',
      'cluster',
      'cluster',
      'cluster',
      'serial',
    ]);
    const clusterSeconds = ordered
      .filter((s) => s.project.name === 'cluster')
      .map((s) => seconds.get(s.moduleId.slice(REPO_ROOT.length + 1)) ?? NEW_FILE_SECONDS);
    expect(clusterSeconds).toEqual([...clusterSeconds].sort((a, b) => b - a));
    // The shortest file on disk of the three is not the shortest run: size would have put it last.
    expect(seconds.get('tests/system/src/cluster-kafka.cluster.int.spec.ts')).toBeGreaterThan(
      seconds.get('libs/transport-redis/src/redis-sentinel.cluster.int.spec.ts')!,
    );
    expect(ordered.at(-2)!.moduleId).toContain('redis-sentinel');
  });
});
