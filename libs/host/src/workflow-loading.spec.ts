/**
 * The hint for a clone that was never built, in a real Node process: Node's own loader (not the
 * test runner's) resolves `@baton/*` to a `dist` file that does not exist.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const WORKFLOWS_MODULE = pathToFileURL(fileURLToPath(new URL('./workflows.ts', import.meta.url))).href;
const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** Loads `specifier` with loadWorkflows from `folder` in a node + tsx process; returns the error message. */
function loadError(folder: string, specifier: string): string {
  const script = join(folder, 'load.mjs');
  writeFileSync(
    script,
    `const { loadWorkflows } = await import(${JSON.stringify(WORKFLOWS_MODULE)});\n` +
      `await loadWorkflows([${JSON.stringify(specifier)}], ${JSON.stringify(folder)}).then(\n` +
      `  () => console.log('loaded'),\n` +
      `  (err) => console.log(err.name + ': ' + err.message),\n` +
      `);\n`,
  );
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@baton/source', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (child.status !== 0) throw new Error(`the loader process failed:\n${child.stdout}${child.stderr}`);
  return child.stdout.trim();
}

describe('loading a workflow module whose @baton packages are not built', () => {
  // A package that resolves (its only export condition is `default`) to a dist file never built.
  const folder = mkdtempSync(join(tmpdir(), 'baton-unbuilt-'));
  mkdirSync(join(folder, 'node_modules/@baton/unbuilt'), { recursive: true });
  writeFileSync(
    join(folder, 'node_modules/@baton/unbuilt/package.json'),
    JSON.stringify({
      name: '@baton/unbuilt',
      type: 'module',
      exports: { '.': { default: './dist/index.js' } },
    }),
  );
  writeFileSync(join(folder, 'flow.mjs'), "export { defineWorkflow } from '@baton/unbuilt';\n");
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('names the two ways out: build, or run the worker on the sources', { timeout: 40_000 }, () => {
    const message = loadError(folder, './flow.mjs');
    expect(message).toMatch(/^ConfigError: BATON_WORKFLOWS: module '\.\/flow\.mjs' could not be loaded/);
    expect(message).toMatch(/@baton[/\\]unbuilt[/\\]dist[/\\]index\.js/);
    expect(message).toContain(
      'the @baton packages are not built: run `npm run build`, or run the worker on the TypeScript sources',
    );
  });

  it('keeps the path hint for a module that is simply missing', { timeout: 40_000 }, () => {
    const message = loadError(folder, './nowhere.mjs');
    expect(message).toMatch(/check the path \(relative paths start at the working directory\)/);
    expect(message).not.toContain('not built');
  });
});
