// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/dist/*'], message: 'Import the package, not its build output.' }] },
      ],
    },
  },
  {
    // The core must stay free of client libraries and I/O (DESIGN §6).
    files: ['libs/core/src/**/*.ts'],
    ignores: ['libs/core/src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'ioredis',
                'pg',
                'kafkajs',
                '@nats-io/*',
                'node:fs',
                'node:net',
                'node:http',
                '@baton/*',
              ],
              message: '@baton/core does no I/O and depends on no adapter.',
            },
          ],
        },
      ],
    },
  },
);
