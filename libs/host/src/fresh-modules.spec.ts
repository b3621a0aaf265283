/**
 * freshWorkflowLoader in a Node process of its own: the spec runner loads modules through its own
 * module runner, not Node's loader, so the hook this file is about only acts in a plain process
 * (tsx there only compiles the loader's own TypeScript).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const LOADER = resolve(import.meta.dirname, 'fresh-modules.ts');
/** tsx, by its file URL: the process runs in a temporary folder with no node_modules. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** A workflow module importing a helper by relative path, and a package (node:path) by name. */
function workflowModule(version: number): string {
  return [
    "import { sep } from 'node:path';",
    "import { greeting } from './greeting.mjs';",
    `export const hello = { kind: 'workflow', name: 'hello', version: ${version}, run: async () => greeting + sep };`,
    '',
  ].join('\n');
}

/**
 * Loads ./workflows.mjs from `dir` once per step, running each step's edit first; prints one JSON
 * line per load: the version and what run() returns, or the error's message.
 */
function driver(steps: string[]): string {
  return [
    "import { writeFileSync } from 'node:fs';",
    `import { freshWorkflowLoader } from ${JSON.stringify(LOADER)};`,
    "const loader = freshWorkflowLoader(['./workflows.mjs'], process.cwd(), 'baton dev');",
    `for (const edit of ${JSON.stringify(steps)}) {`,
    '  if (edit !== "") { const [file, text] = JSON.parse(edit); writeFileSync(file, text); }',
    '  try {',
    '    const { workflows: [w] } = await loader.load();',
    '    console.log(JSON.stringify({ version: w.version, says: await w.run(), same: w === globalThis.last }));',
    '    globalThis.last = w;',
    '  } catch (err) { console.log(JSON.stringify({ error: err.message })); }',
    '}',
    '',
  ].join('\n');
}

describe('freshWorkflowLoader (in a process of its own)', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-fresh-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads the files as they are now on every call; a load that fails names the module, the next good one works', async () => {
    await writeFile(join(dir, 'workflows.mjs'), workflowModule(1));
    await writeFile(join(dir, 'greeting.mjs'), "export const greeting = 'hello';\n");
    const edit = (file: string, text: string): string => JSON.stringify([file, text]);
    await writeFile(
      join(dir, 'driver.mjs'),
      driver([
        '',
        // Only a file the module imports changes.
        edit('greeting.mjs', "export const greeting = 'hi';\n"),
        // The module itself changes.
        edit('workflows.mjs', workflowModule(2)),
        edit('workflows.mjs', 'export const = ;\n'),
        edit('workflows.mjs', workflowModule(3)),
      ]),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', TSX, '--conditions=@baton/source', 'driver.mjs'],
      { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 60_000 },
    );
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.slice(0, 3)).toEqual([
      { version: 1, says: 'hello/', same: false },
      { version: 1, says: 'hi/', same: false },
      { version: 2, says: 'hi/', same: false },
    ]);
    expect(lines[3]!['error']).toMatch(
      /^baton dev: module '\.\/workflows\.mjs' could not be loaded .*fix the syntax error/,
    );
    expect(lines[4]).toEqual({ version: 3, says: 'hi/', same: false });
  }, 90_000);
});
