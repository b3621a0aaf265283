import { configDefaults, defineConfig } from 'vitest/config';

/** Every spec file of the repository. */
const SPECS = ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts'];

/**
 * Specs whose faults are timed against servers or fleets of their own: the worker crash suites
 * (a SIGTERMed worker must stop starting work within 500 ms, and exit within its grace), server
 * clusters whose nodes are killed (waiting for promotions and elections), rolling updates, a
 * browser, the benchmarks' workloads; and the specs that build and pack the libraries. They run
 * one file at a time, after the others (the `serial` project), so no neighbour stretches their
 * waits on this 2-core machine (beside other specs, a crash suite's SIGTERM check failed).
 */
export const SERIAL_SPECS = [
  'apps/worker/src/crash-*.int.spec.ts',
  'apps/worker/src/cluster-*.int.spec.ts',
  'apps/worker/src/rollout-*.int.spec.ts',
  'apps/worker/src/version-routing.int.spec.ts',
  'apps/worker/src/memory-budget.int.spec.ts',
  'apps/bench/src/**/*.int.spec.ts',
  // They run `nx run-many -t build`, which may rewrite the libraries' dist folders: nothing that
  // runs the built code (the `baton` binary, worker processes on dist) may run beside them.
  'apps/deploy/src/packed-packages.int.spec.ts',
  'apps/cli/src/packed-cli.int.spec.ts',
  // It builds the CLI too (nx restores the cached dist, rewriting it) while cli.int.spec.ts, in the
  // parallel phase, runs the built binary: seen in CI as ENOENT on a dist file the build rewrote.
  'apps/cli/src/operator-edges.int.spec.ts',
  'libs/console/src/*.int.spec.ts',
  'libs/transport-kafka/src/kafka-cluster.int.spec.ts',
  'libs/transport-nats/src/nats-cluster.int.spec.ts',
  'libs/store-redis/src/sentinel.int.spec.ts',
  'libs/transport-redis/src/redis-sentinel.int.spec.ts',
];

/** The rest: unit specs and integration specs on their own namespaces, two files at a time. */
const PARALLEL_WORKERS = 2;

export default defineConfig({
  resolve: { conditions: ['@baton/source'] },
  ssr: { resolve: { conditions: ['@baton/source'] } },
  test: {
    globalSetup: ['libs/testing/src/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: SPECS,
          exclude: [...configDefaults.exclude, ...SERIAL_SPECS],
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
          name: 'serial',
          include: SERIAL_SPECS,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
