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
import { PROJECT_SUFFIXES, projectOf } from '../../../vitest.projects.js';
import { PAIRED_SPECS, SERIAL_SPECS } from '../../../vitest.config.js';

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
    const paired = (file: string) => spec('paired', 1, file);
    const files = [
      spec('serial', 2, 'tests/system/src/crash-rate-limits.serial.int.spec.ts'),
      paired('libs/transport-redis/src/redis-sentinel.cluster.int.spec.ts'),
      paired('tests/system/src/cluster-kafka.cluster.int.spec.ts'),
      spec('parallel', 0, 'apps/deploy/src/release.spec.ts'),
      paired('tests/system/src/cluster-nats.cluster.int.spec.ts'),
      paired('tests/system/src/crash-matrix.fleet.int.spec.ts'),
    ];
    const ordered = await new DurationSequencer(freshRunner).sort(files);
    expect(ordered.map((s) => s.project.name)).toEqual([
      'parallel',
      'paired',
      'paired',
      'paired',
      'paired',
      'serial',
    ]);
    const pairedSeconds = ordered
      .filter((s) => s.project.name === 'paired')
      .map((s) => seconds.get(s.moduleId.slice(REPO_ROOT.length + 1)) ?? NEW_FILE_SECONDS);
    expect(pairedSeconds).toEqual([...pairedSeconds].sort((a, b) => b - a));
    // The shortest file on disk of the four is not the shortest run: size would have put it last.
    expect(seconds.get('tests/system/src/cluster-kafka.cluster.int.spec.ts')).toBeGreaterThan(
      seconds.get('libs/transport-redis/src/redis-sentinel.cluster.int.spec.ts')!,
    );
    expect(ordered.at(-2)!.moduleId).toContain('redis-sentinel');
  });

  it('puts each spec file in the project its name says (vitest.projects.ts), as the config includes it', () => {
    expect(projectOf('tests/system/src/crash-matrix.fleet.int.spec.ts')).toBe('paired');
    expect(projectOf('tests/system/src/cluster-nats.cluster.int.spec.ts')).toBe('paired');
    expect(projectOf('tests/system/src/crash-sigterm.serial.int.spec.ts')).toBe('serial');
    expect(projectOf('libs/store-redis/src/store.int.spec.ts')).toBe('parallel');
    expect(projectOf('libs/core/src/author/signal.spec.ts')).toBe('parallel');
    // The config's globs are the same suffixes, each under every spec root.
    for (const suffix of PROJECT_SUFFIXES.paired) {
      expect(PAIRED_SPECS).toContain(`tests/*/src/**/*${suffix}`);
    }
    expect(SERIAL_SPECS).toEqual(
      PROJECT_SUFFIXES.serial.flatMap((suffix) => [
        `libs/*/src/**/*${suffix}`,
        `apps/*/src/**/*${suffix}`,
        `tests/*/src/**/*${suffix}`,
        `examples/*/src/**/*${suffix}`,
      ]),
    );
  });
});
