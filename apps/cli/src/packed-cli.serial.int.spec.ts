/**
 * The CLI as npm would ship it: `@baton/cli` and the workspace packages it depends on (`@baton/host`
 * for the configuration code it shares with the worker, and the libs under it) are built, packed
 * with `npm pack`, and installed from their tarballs into an empty project outside the repository,
 * every other dependency coming from the npm registry. There the installed `baton` bin runs with
 * plain node (no workspace links, no source condition) against the real NATS + Redis.
 *
 * No app is in its closure (the worker process is not needed to run the CLI). The CLI and the
 * console are not published yet, so `npm i @baton/cli` from the registry does not work: this checks
 * the packages themselves (files, bin, dependencies), as apps/deploy's packed-packages spec does
 * for the public libs.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@baton/testing/crash';
import { natsTestUrl, redisTestUrl } from '@baton/testing/servers';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(
  file: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<Result> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
}

/** Workspace package name -> its folder, for every package under libs/ and apps/. */
async function workspaceFolders(): Promise<Map<string, string>> {
  const folders = new Map<string, string>();
  for (const group of ['libs', 'apps']) {
    for (const entry of await readdir(join(REPO_ROOT, group))) {
      const manifest = JSON.parse(
        await readFile(join(REPO_ROOT, group, entry, 'package.json'), 'utf8').catch(() => '{}'),
      ) as Manifest;
      if (manifest.name !== undefined) folders.set(manifest.name, join(REPO_ROOT, group, entry));
    }
  }
  return folders;
}

/** `@baton/cli` and every workspace package its runtime dependencies reach. */
async function runtimeClosure(): Promise<string[]> {
  const folders = await workspaceFolders();
  const seen = new Set<string>();
  const visit = async (name: string): Promise<void> => {
    if (seen.has(name) || !folders.has(name)) return;
    seen.add(name);
    const manifest = JSON.parse(await readFile(join(folders.get(name)!, 'package.json'), 'utf8')) as Manifest;
    for (const dependency of Object.keys(manifest.dependencies ?? {})) await visit(dependency);
  };
  await visit('@baton/cli');
  return [...seen].sort();
}

const ns = `clipk${randomBytes(4).toString('hex')}`;
const env = {
  BATON_TRANSPORT_URL: natsTestUrl(),
  BATON_STORE_URL: redisTestUrl(),
  ...isolatedEnv('transport', natsTestUrl(), ns),
  ...isolatedEnv('store', redisTestUrl(), ns),
};
let workDir = '';
let bin = '';

describe('the packed CLI in an empty project', () => {
  beforeAll(async () => {
    const names = await runtimeClosure();
    expect(names).toContain('@baton/host');
    expect(names).not.toContain('@baton/worker-app');
    workDir = await mkdtemp(join(tmpdir(), 'baton-packed-cli-'));
    const pack = await exec(
      'npm',
      ['pack', '--json', '--pack-destination', workDir, ...names.flatMap((n) => ['-w', n])],
      REPO_ROOT,
      process.env,
      120_000,
    );
    expect(pack.code, pack.stderr).toBe(0);
    const packed = JSON.parse(pack.stdout) as { name: string; filename: string; files: { path: string }[] }[];
    const cli = packed.find((p) => p.name === '@baton/cli')!;
    expect(cli.files.map((f) => f.path)).toContain('dist/main.js');
    expect(cli.files.map((f) => f.path).filter((p) => /\.spec/.test(p))).toEqual([]);

    const project = join(workDir, 'project');
    await mkdir(project);
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'cli-consumer', version: '1.0.0', private: true, type: 'module' }),
    );
    const install = await exec(
      'npm',
      ['install', '--no-audit', '--no-fund', ...packed.map((p) => join(workDir, p.filename))],
      project,
      process.env,
      300_000,
    );
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0);
    bin = join(project, 'node_modules', '.bin', 'baton');
  }, 600_000);

  afterAll(async () => {
    await removeIsolated('transport', env.BATON_TRANSPORT_URL, ns);
    await removeIsolated('store', env.BATON_STORE_URL, ns);
    if (workDir !== '') await rm(workDir, { recursive: true, force: true });
  }, 60_000);

  const baton = (...args: string[]): Promise<Result> =>
    exec(bin, args, workDir, { PATH: process.env.PATH, ...env }, 60_000);

  it('runs its installed bin: help, a listing on real servers, a refusal', { timeout: 60_000 }, async () => {
    const help = await baton('--help');
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/Commands:\s+runs\s/);
    const list = await baton('runs', 'list', '--json');
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ runs: [] });
    const unknown = await baton('runs', 'describe', 'no-such-run');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no run no-such-run in this store/);
  });
});
