import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@baton/source'] },
  ssr: { resolve: { conditions: ['@baton/source'] } },
  test: {
    include: ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts'],
    // Compile-time tests (*.spec-d.ts): tsc checks them; an unused @ts-expect-error fails the run.
    typecheck: {
      enabled: true,
      include: ['libs/*/src/**/*.spec-d.ts'],
      tsconfig: './tsconfig.type-tests.json',
    },
    globalSetup: ['libs/testing/src/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
