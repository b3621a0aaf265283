/**
 * `npm run test:unit`: the specs that need no server, on the same settings as vitest.config.ts.
 *
 * Integration specs are the `*.int.spec.ts` files; everything else runs on the in-memory adapters,
 * private fakes or offline files. The global setup (which looks for the servers, starts containers
 * and the Kafka broker) is left out, so nothing here waits for or starts a server.
 * docs/developing.md ("Checks and tests") gives the check: these specs pass with every server URL
 * pointing at a closed port.
 */
import { configDefaults, defineConfig } from 'vitest/config';

export const UNIT_EXCLUDE = ['**/*.int.spec.ts'];

export default defineConfig({
  resolve: { conditions: ['@baton/source'] },
  ssr: { resolve: { conditions: ['@baton/source'] } },
  test: {
    include: [
      'libs/*/src/**/*.spec.ts',
      'apps/*/src/**/*.spec.ts',
      'tests/*/src/**/*.spec.ts',
      'examples/*/src/**/*.spec.ts',
    ],
    exclude: [...configDefaults.exclude, ...UNIT_EXCLUDE],
    typecheck: {
      enabled: true,
      include: ['libs/*/src/**/*.spec-d.ts'],
      tsconfig: './tsconfig.type-tests.json',
    },
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
