import { configDefaults, defineConfig } from 'vitest/config';
import { DurationSequencer } from './vitest.sequencer.js';
import { PROJECT_ORDER, PROJECT_SUFFIXES, PROJECT_WORKERS } from './vitest.projects.js';

/** Every spec file of the repository (the examples' too). */
const SPECS = [
  'libs/*/src/**/*.spec.ts',
  'apps/*/src/**/*.spec.ts',
  'tests/*/src/**/*.spec.ts',
  'examples/*/src/**/*.spec.ts',
];

/**
 * The globs of the spec files ending in `suffixes`. The projects are naming rules
 * (vitest.projects.ts says which spec takes which suffix, and why). No spec builds: the global
 * setup (libs/testing/src/global-setup.ts) builds the workspace once before any spec starts, since
 * a build may rewrite the libraries' dist folders while another spec runs the built code.
 */
function named(suffixes: readonly string[]): string[] {
  return suffixes.flatMap((suffix) => SPECS.map((glob) => glob.replace(/\.spec\.ts$/, suffix)));
}

export const SERIAL_SPECS = named(PROJECT_SUFFIXES.serial);
export const PAIRED_SPECS = named(PROJECT_SUFFIXES.paired);

export default defineConfig({
  resolve: { conditions: ['@baton/source'] },
  ssr: { resolve: { conditions: ['@baton/source'] } },
  test: {
    globalSetup: ['libs/testing/src/global-setup.ts'],
    // Longest files first in every project, from vitest.durations.json (vitest.sequencer.ts).
    sequence: { sequencer: DurationSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: SPECS,
          exclude: [...configDefaults.exclude, ...SERIAL_SPECS, ...PAIRED_SPECS],
          maxWorkers: PROJECT_WORKERS.parallel,
          sequence: { groupOrder: PROJECT_ORDER.indexOf('parallel') },
          // Compile-time tests (*.spec-d.ts): tsc checks them; an unused @ts-expect-error fails the run.
          typecheck: {
            enabled: true,
            include: ['libs/*/src/**/*.spec-d.ts'],
            tsconfig: './tsconfig.type-tests.json',
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'paired',
          include: PAIRED_SPECS,
          maxWorkers: PROJECT_WORKERS.paired,
          sequence: { groupOrder: PROJECT_ORDER.indexOf('paired') },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL_SPECS,
          fileParallelism: false,
          sequence: { groupOrder: PROJECT_ORDER.indexOf('serial') },
        },
      },
    ],
  },
});
