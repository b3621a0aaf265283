/**
 * A workflow module of your own, in a folder of its own inside the clone, run the two ways
 * docs/workflows.md documents ("Your own workflow module"; the README shows the tsx one, and its
 * commands are listed in apps/deploy/src/first-page.ts as run here):
 * - built: `tsc -p` on a tsconfig that extends tsconfig.workflows.json, then plain `node` on the
 *   JavaScript (the packages' `dist`, as `npm run build` leaves them);
 * - through tsx with the `@baton/source` condition, on the TypeScript as written.
 * Each way runs a script of the user's own on the in-memory default, and the worker process (the
 * `npm run worker` command, or `node apps/worker/dist/main.js`) on NATS + Redis with
 * BATON_WORKFLOWS naming the module.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import { REPO_ROOT } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const TSX = resolve(REPO_ROOT, 'node_modules/.bin/tsx');
/** The root package.json's `npm run worker` command, run here without npm around it. */
const WORKER_SCRIPT = (
  JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts.worker!.split(' ');
const TSC = resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc');

const FILES: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    extends: '../../tsconfig.workflows.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist' },
    include: ['src'],
  }),
  'src/greet.ts': `import { defineActivity, defineWorkflow } from '@baton/core';

const shout = defineActivity({
  name: 'shout',
  run: async (input: { name: string }) => \`HELLO, \${input.name.toUpperCase()}\`,
});

export const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  run: async (ctx, input: { name: string }) => ctx.run(shout, input),
});
`,
  'src/try-it.ts': `import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client } from '@baton/client';
import { Worker } from '@baton/worker';
import { greet } from './greet.js';

const transport = memoryTransport();
const store = memoryStore();
const worker = new Worker({ transport, store, workflows: [greet] });
await worker.start();
const run = await new Client({ transport, store }).start(greet, { name: 'ada' });
console.log(await run.result({ timeoutMs: 10_000 }));
await worker.stop();
`,
};

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (or kills it after `timeoutMs`), keeping its output. */
function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Exit> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...env } });
  return collect(child, timeoutMs);
}

function collect(child: ReturnType<typeof spawn>, timeoutMs: number): Promise<Exit> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolveExit) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveExit({ code, stdout, stderr });
    }),
  );
}

describe('a workflow module of your own', () => {
  let folder: string;
  /** The folder as a path relative to the clone, as a user would write it in BATON_WORKFLOWS. */
  let relativeFolder: string;

  beforeAll(() => {
    mkdirSync(resolve(REPO_ROOT, '.tmp'), { recursive: true });
    folder = mkdtempSync(resolve(REPO_ROOT, '.tmp/own-workflow-'));
    relativeFolder = `./${relative(REPO_ROOT, folder)}`;
    for (const [name, text] of Object.entries(FILES)) {
      mkdirSync(resolve(folder, name, '..'), { recursive: true });
      writeFileSync(resolve(folder, name), text);
    }
    const built = spawnSync(process.execPath, [TSC, '-p', resolve(folder, 'tsconfig.json')], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    if (built.status !== 0) throw new Error(`tsc failed on the module:\n${built.stdout}${built.stderr}`);
  }, 60_000);
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('runs as TypeScript through tsx --conditions=@baton/source', { timeout: 60_000 }, async () => {
    const exit = await run(TSX, ['--conditions=@baton/source', `${relativeFolder}/src/try-it.ts`]);
    expect(exit.stderr).toBe('');
    expect(exit.stdout.trim()).toBe('HELLO, ADA');
    expect(exit.code).toBe(0);
  });

  it('runs built, with plain node', { timeout: 60_000 }, async () => {
    const exit = await run(process.execPath, [`${relativeFolder}/dist/try-it.js`]);
    expect(exit.stderr).toBe('');
    expect(exit.stdout.trim()).toBe('HELLO, ADA');
    expect(exit.code).toBe(0);
  });

  describe.each([
    {
      way: 'npm run worker (tsx, the TypeScript module)',
      command: WORKER_SCRIPT[0] === 'node' ? process.execPath : WORKER_SCRIPT[0]!,
      args: WORKER_SCRIPT.slice(1),
      module: 'src/greet.ts',
    },
    {
      way: 'node apps/worker/dist/main.js (the compiled module)',
      command: process.execPath,
      args: ['apps/worker/dist/main.js'],
      module: 'dist/greet.js',
    },
  ])('in the worker process: $way', ({ command, args, module }) => {
    it('completes a run of it on NATS + Redis and exits 0 on SIGTERM', { timeout: 90_000 }, async () => {
      const env = await crashEnvironment('redis', 'nats')(`own${process.pid}x${Date.now()}`, {});
      const client = new Client({ transport: env.transport, store: env.store });
      const worker = spawn(command, args, {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ...env.workerEnv,
          BATON_WORKFLOWS: `${relativeFolder}/${module}`,
          BATON_HTTP_PORT: '0',
          BATON_LOG_LEVEL: 'info',
        },
      });
      const exited = collect(worker, 80_000);
      try {
        await client.connect();
        const handle = await client.start({ name: 'greet', version: 1 }, { name: 'grace' });
        const result = await Promise.race([
          handle.result({ timeoutMs: 60_000 }),
          exited.then((exit) => {
            throw new Error(`the worker exited (${exit.code}) first:\n${exit.stdout}${exit.stderr}`);
          }),
        ]);
        expect(result).toBe('HELLO, GRACE');
      } finally {
        worker.kill('SIGTERM');
        const exit = await exited;
        await Promise.allSettled([env.transport.close(), env.store.close()]);
        await env.dispose();
        expect(exit.code, exit.stdout + exit.stderr).toBe(0);
      }
    });
  });
});
