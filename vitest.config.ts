import { configDefaults, defineConfig } from 'vitest/config';

/** Every spec file of the repository. */
const SPECS = ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts'];

/**
 * Specs that load the machine for long or measure how a fleet behaves under faults: worker
 * processes SIGKILLed or rolled, server clusters of their own, a browser. They run one file at a
 * time, after the others (the `serial` project), so two of them never compete for this 2-core
 * machine's CPU and none of their timeouts is stretched by a neighbour.
 */
export const SERIAL_SPECS = [
  'apps/worker/src/crash-*.int.spec.ts',
  'apps/worker/src/cluster-*.int.spec.ts',
  'apps/worker/src/rollout-*.int.spec.ts',
  'apps/worker/src/version-routing.int.spec.ts',
  'apps/worker/src/memory-budget.int.spec.ts',
  'apps/bench/src/**/*.int.spec.ts',
  'apps/console/src/*.int.spec.ts',
  'libs/transport-kafka/src/kafka-cluster.int.spec.ts',
  'libs/transport-nats/src/nats-cluster.int.spec.ts',
  'libs/store-redis/src/sentinel.int.spec.ts',
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
