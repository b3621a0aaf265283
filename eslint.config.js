// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Never import a package's build output; plus, per file group, the @baton/core doors it may not use. */
const DIST = { group: ['**/dist/*'], message: 'Import the package, not its build output.' };

/** The import patterns `files` may not use: a build output or an app, plus the groups given. */
function restrict(...patterns) {
  return { 'no-restricted-imports': ['error', { patterns: [DIST, NO_APP, ...patterns] }] };
}

/**
 * The doors of @baton/core, by audience (libs/core/README.md): the root for workflow authors,
 * `/adapter` for transport and store authors, `/runtime` for the worker, the client and the test
 * kit, `/memory` for the demo, the bench and tests.
 */
function doorsClosed(doors, why) {
  return { group: doors.map((d) => `@baton/core/${d}`), message: why };
}
const TESTS = ['**/*.spec.ts', '**/*.spec-helper.ts', '**/*.spec-d.ts'];

/**
 * No package imports an app: what processes share (adapter registry, BATON_* configuration,
 * workflow loading) is `@baton/host`, and the console the CLI and the demo serve is a library
 * (`@baton/console`), so each app can be shipped alone. The deployment checks (apps/deploy) are
 * the exception: they compare the chart, the compose file and the image with the worker's code.
 */
const APPS = ['worker-app', 'cli', 'bench', 'demo', 'deploy-checks'];
const APP_FOLDERS = ['worker', 'cli', 'bench', 'demo', 'deploy'];
const NO_APP = {
  group: [
    ...APPS.map((a) => `@baton/${a}`),
    ...APP_FOLDERS.flatMap((f) => [`../../${f}/src/**`, `../../../${f}/src/**`, `**/apps/${f}/src/**`]),
  ],
  message: 'Nothing imports an app; shared code belongs in a library (@baton/host).',
};
const RUNTIME_CLOSED = doorsClosed(
  ['runtime'],
  '@baton/core/runtime is for the worker, the client and the test kit.',
);
const MEMORY_CLOSED = doorsClosed(['memory'], 'The embedded adapters are for the demo, the bench and tests.');

/** What @baton/core never imports, in any folder: client libraries, I/O, the other packages. */
const CORE_IO = {
  group: ['ioredis', 'pg', 'kafkajs', '@nats-io/*', 'node:fs', 'node:net', 'node:http', '@baton/*'],
  message: '@baton/core does no I/O and depends on no adapter.',
};

/**
 * The config block keeping `libs/core/src/<folder>` (its code, not its specs) out of the sibling
 * folders in `closed`, imported by relative path. A `!folder/sub` entry lets that sub-folder (or file) in.
 */
function coreFolder(folder, closed, why, files = '**/*.ts') {
  const group = closed.map((f) => (f.startsWith('!') ? `!**/${f.slice(1)}` : `**/${f}/*`));
  return {
    files: [`libs/core/src/${folder}/${files}`],
    ignores: TESTS,
    rules: { 'no-restricted-imports': ['error', { patterns: [CORE_IO, { group, message: why }] }] },
  };
}

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.nx/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { patterns: [DIST] }],
    },
  },
  {
    // A later block's no-restricted-imports replaces this one, so each later block repeats it
    // (restrict() always does).
    files: ['**/*.ts'],
    ignores: ['apps/deploy/**'],
    rules: restrict(),
  },
  {
    // An adapter implements the contracts; the runtime and the embedded adapters are not its concern.
    files: ['libs/transport-*/src/**/*.ts', 'libs/store-*/src/**/*.ts', 'libs/redis-kit/src/**/*.ts'],
    ignores: TESTS,
    rules: restrict(
      doorsClosed(['runtime', 'memory'], 'An adapter imports @baton/core and @baton/core/adapter only.'),
    ),
  },
  {
    // The runtime is for the worker, the client and the test kit; the embedded adapters for the
    // demo, the bench, the test kit and tests.
    files: ['libs/telemetry/src/**/*.ts'],
    ignores: TESTS,
    rules: restrict(RUNTIME_CLOSED),
  },
  {
    files: ['apps/demo/src/**/*.ts', 'apps/bench/src/**/*.ts'],
    ignores: TESTS,
    rules: restrict(RUNTIME_CLOSED),
  },
  {
    files: [
      'libs/worker/src/**/*.ts',
      'libs/client/src/**/*.ts',
      'libs/host/src/**/*.ts',
      'libs/console/src/**/*.ts',
    ],
    // `baton dev` runs the user's workflows on the embedded pair: its fleet is the one production
    // file that builds them (libs/host/src/dev-fleet.ts), so the demo's bus is a user's too.
    ignores: [...TESTS, 'libs/console/src/bench/**', 'libs/host/src/dev-fleet.ts'],
    rules: restrict(MEMORY_CLOSED),
  },
  {
    files: ['apps/worker/src/**/*.ts'],
    ignores: [...TESTS, 'apps/worker/src/examples/**'],
    rules: restrict(MEMORY_CLOSED),
  },
  {
    // The operator tools are the client's users: what they need of @baton/core beyond the
    // authors' door comes through @baton/client, so they ship with the client's contract only.
    files: ['apps/cli/src/**/*.ts', 'libs/console/src/**/*.ts'],
    ignores: [...TESTS, 'libs/console/src/bench/**'],
    rules: restrict(
      doorsClosed(
        ['adapter', 'runtime', 'memory'],
        'The CLI and the console use @baton/client and @baton/core only.',
      ),
    ),
  },
  {
    // Workflow code (the examples users copy) is written against the authors' door alone.
    files: ['apps/worker/src/examples/**/*.ts', 'apps/demo/src/loan-workflow.ts'],
    rules: restrict(
      doorsClosed(
        ['adapter', 'runtime', 'memory'],
        'Workflow code imports @baton/core (and @baton/client) only.',
      ),
    ),
  },
  {
    // The core must stay free of client libraries and I/O (DESIGN §6).
    files: ['libs/core/src/**/*.ts'],
    ignores: ['libs/core/src/**/*.spec.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [CORE_IO] }] },
  },
  // @baton/core's folders are its doors (author/ the root, adapter/, runtime/, memory/) plus
  // shared/, what several doors build on. The layering the code has: shared/ imports no door;
  // adapter/ only shared/; author/ shared/ and, for the bounds a rate limit is checked against,
  // adapter/contracts/ (the store contract's); memory/ adapter/ and shared/ (an embedded adapter
  // is written against the contracts like any other); runtime/ everything but memory/. So an
  // author's or an adapter's door never drags in the run machinery. Specs may cross (a spec of
  // adapter/priority.ts round-trips a run message through the runtime's codec).
  coreFolder('shared', ['author', 'adapter', 'runtime', 'memory'], 'shared/ is below every door.'),
  coreFolder('adapter', ['author', 'runtime', 'memory'], 'The adapter door builds on shared/ alone.'),
  coreFolder(
    'author',
    ['runtime', 'memory', 'adapter', '!adapter/contracts'],
    "The authors' door holds no runtime; of the adapter's, only its contracts.",
  ),
  // The root door itself still re-exports the errors a user may catch from a client call
  // (CheckpointIntegrityError, CodecError, MissingKeyError...), defined where they are raised.
  coreFolder(
    'author',
    ['runtime', 'memory', 'adapter', '!adapter/contracts', '!adapter/errors.js', '!runtime/errors.js'],
    "The authors' door holds no runtime: of the other folders, only their errors and contracts.",
    'index.ts',
  ),
  coreFolder('memory', ['author', 'runtime'], 'The embedded adapters build on the adapter door alone.'),
  coreFolder('runtime', ['memory'], 'The runtime runs over any adapter, never the embedded ones.'),
);
