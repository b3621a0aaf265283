import { configDefaults, defineConfig } from 'vitest/config';
import { DurationSequencer } from './vitest.sequencer.js';

/** Every spec file of the repository. */
const SPECS = ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts', 'tests/*/src/**/*.spec.ts'];

/**
 * The serial set is a naming rule: a `*.serial.int.spec.ts` file runs alone, after the others (the
 * `serial` project). Name a spec so when its faults are timed against servers or fleets of its
 * own: the worker crash suites (a SIGTERMed worker must stop starting work within 500 ms, and exit
 * within its grace), rolling updates, a browser, the benchmarks' workloads. On this 2-core machine a
 * neighbour stretched such waits until a crash suite's SIGTERM check failed. No spec builds: the
 * global setup (libs/testing/src/global-setup.ts) builds the workspace once before any spec starts,
 * since a build may rewrite the libraries' dist folders while another spec runs the built code.
 */
export const SERIAL_SPECS = SPECS.map((glob) => glob.replace(/\*\.spec\.ts$/, '*.serial.int.spec.ts'));

/**
 * The cluster set, another naming rule: a `*.cluster.int.spec.ts` file starts server nodes of its
 * own (a 3-node NATS or Kafka cluster, Redis with Sentinel, a Postgres primary and standby, on
 * ports no other spec uses) and kills, freezes or cuts them off. Such a spec spends most of its
 * time waiting (for an election, a promotion, a 10 s freeze) rather than computing, and asserts
 * outcomes (nothing lost, nothing twice), not latencies, so two of them run side by side (the
 * `cluster` project), after the parallel specs and before the serial ones. In CI on this 2-core
 * machine (stop 46) the eight took 245 s side by side, 506 s one at a time in the serial project.
 */
export const CLUSTER_SPECS = SPECS.map((glob) => glob.replace(/\*\.spec\.ts$/, '*.cluster.int.spec.ts'));

/** The rest: unit specs and integration specs on their own namespaces, two files at a time. */
const PARALLEL_WORKERS = 2;

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
          exclude: [...configDefaults.exclude, ...SERIAL_SPECS, ...CLUSTER_SPECS],
          maxWorkers: PARALLEL_WORKERS,
          sequence: { groupOrder: 0 },
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
          name: 'cluster',
          include: CLUSTER_SPECS,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL_SPECS,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
