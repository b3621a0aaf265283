import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['@baton/source'] },
  ssr: { resolve: { conditions: ['@baton/source'] } },
  test: {
    include: ['libs/*/src/**/*.spec.ts', 'apps/*/src/**/*.spec.ts'],
    globalSetup: ['libs/testing/src/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
