/**
 * The packages as npm would publish them, installed where a user would install them: every public
 * package of libs/ and apps/ (no `"private": true`: the libraries, `@baton/console` and the CLI,
 * `@baton/cli`) is packed with `npm pack` and installed from its tarball into an empty project
 * outside the repository, its dependencies coming from the npm registry alone. There, plain `node`
 * (no `@baton/source` condition, no workspace links) runs a workflow to completion on the real
 * NATS + Redis and NATS + PostgreSQL; the installed `baton` runs as `npx baton` (help, a listing on
 * real servers), and `baton dev` runs the project's own TypeScript workflow module with the
 * console and the HTTP API, a run started over HTTP completing; and the TypeScript compiler checks
 * a consumer against the packed declarations (`strict`).
 *
 * Time, measured on a shared 2-core machine: about 40 s when npm's cache holds the dependencies (25 s in
 * CI's clean-clone run of stop 46, with the machine to itself):
 * pack 3 s, install 14 s, the two runs 2 s, tsc 19 s. The packages are built by the tests' global
 * setup (libs/testing/src/global-setup.ts); an empty npm cache downloads about 90 packages once.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, lstat, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { deleteNatsStreams } from '@baton/transport-nats';
import { purgeRedisKeyPrefix } from '@baton/store-redis';
import { dropPostgresSchema } from '@baton/store-postgres';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import { REPO_ROOT } from './helm.js';

const FIXTURES = join(REPO_ROOT, 'apps', 'deploy', 'src', 'packed-project');

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  publishConfig?: { access?: string };
  exports?: Record<string, Record<string, string>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

interface PublicPackage {
  dir: string;
  /** Its folder from the repository's root (`libs/core`, `apps/cli`), as `repository.directory`. */
  where: string;
  manifest: PackageJson;
}

/** What `npm pack --json` reports per package. */
interface PackResult {
  name: string;
  filename: string;
  files: { path: string }[];
}

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit, so callers can show the output. */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolvePromise({ code, stdout, stderr: stderr + (error && code === 1 ? `\n${error.message}` : '') });
      },
    );
  });
}

function failure(what: string, result: CommandResult): string {
  return `${what} exited with ${result.code}:\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`;
}

/** The packages a release publishes: those of libs/ and apps/ without `"private": true`. */
async function publicPackages(): Promise<PublicPackage[]> {
  const found: PublicPackage[] = [];
  for (const group of ['libs', 'apps']) {
    for (const entry of (await readdir(join(REPO_ROOT, group))).sort()) {
      const dir = join(REPO_ROOT, group, entry);
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
      if (!manifest.private) found.push({ dir, where: `${group}/${entry}`, manifest });
    }
  }
  return found;
}

/** Every file an `exports` entry points at for a consumer (the repo-only source condition aside). */
function exportTargets(manifest: PackageJson): string[] {
  return Object.values(manifest.exports ?? {}).flatMap((conditions) =>
    Object.entries(conditions)
      .filter(([condition]) => condition !== '@baton/source')
      .map(([, target]) => target.replace(/^\.\//, '')),
  );
}

const prefix = `pk${randomBytes(5).toString('hex')}`;
/** The namespace the installed CLI reads on the real servers (nothing is written there). */
const cliNamespace = `${prefix}cli`;
const timings: Record<string, number> = {};
let packages: PublicPackage[] = [];
let packed: PackResult[] = [];
let workDir = '';
let projectDir = '';

async function timed<T>(phase: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[phase] = Date.now() - started;
  }
}

describe('the packed packages in an empty project', () => {
  beforeAll(async () => {
    packages = await publicPackages();
    const names = packages.map((p) => p.manifest.name);
    expect(names, 'the public packages').toEqual(
      expect.arrayContaining(['@baton/core', '@baton/cli', '@baton/console']),
    );
    // Outside the repository, so nothing resolves from its node_modules by accident.
    workDir = await mkdtemp(join(tmpdir(), 'baton-packed-'));
    const tarballs = join(workDir, 'tarballs');
    projectDir = join(workDir, 'project');
    await mkdir(tarballs);
    await mkdir(projectDir);

    await timed('pack', async () => {
      const pack = await run(
        'npm',
        ['pack', '--json', '--pack-destination', tarballs, ...names.flatMap((n) => ['-w', n])],
        { cwd: REPO_ROOT, timeoutMs: 120_000 },
      );
      expect(pack.code, failure('npm pack', pack)).toBe(0);
      packed = JSON.parse(pack.stdout) as PackResult[];
    });

    await timed('install', async () => {
      // What `npm init -y` and `npm pkg set type=module` would leave, written at once.
      await writeFile(
        join(projectDir, 'package.json'),
        JSON.stringify(
          { name: 'baton-packed-smoke', version: '1.0.0', private: true, type: 'module' },
          null,
          2,
        ),
      );
      const root = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
      const typesNode = root.devDependencies?.['@types/node'];
      expect(typesNode, 'the root package.json pins @types/node').toBeTruthy();
      const install = await run(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--prefer-offline',
          ...packed.map((p) => join(tarballs, p.filename)),
          `@types/node@${typesNode}`,
        ],
        { cwd: projectDir, timeoutMs: 600_000 },
      );
      expect(
        install.code,
        failure('npm install of the tarballs (the npm registry must be reachable)', install),
      ).toBe(0);
    });
    for (const file of ['smoke.mjs', 'consumer.ts', 'workflows.ts'])
      await copyFile(join(FIXTURES, file), join(projectDir, file));
  }, 900_000);

  afterAll(async () => {
    console.info(`packed packages: ${JSON.stringify(timings)} ms`);
    const servers = natsTestUrl();
    await Promise.allSettled([
      deleteNatsStreams({ servers, prefix: `${prefix}-r` }),
      deleteNatsStreams({ servers, prefix: `${prefix}-p` }),
      purgeRedisKeyPrefix({ url: redisTestUrl(), keyPrefix: `${prefix}:` }),
      dropPostgresSchema({ url: postgresTestUrl(), schema: prefix }),
      removeIsolated('transport', natsTestUrl(), cliNamespace),
      removeIsolated('store', redisTestUrl(), cliNamespace),
    ]);
    if (workDir) await rm(workDir, { recursive: true, force: true });
  }, 60_000);

  it('packs each public package with its build, README, LICENSE and no test files', () => {
    expect(packed.map((p) => p.name).sort()).toEqual(packages.map((p) => p.manifest.name).sort());
    const problems: string[] = [];
    for (const { manifest } of packages) {
      const files = new Set(packed.find((p) => p.name === manifest.name)!.files.map((f) => f.path));
      for (const required of ['package.json', 'README.md', 'LICENSE', ...exportTargets(manifest)]) {
        if (!files.has(required)) problems.push(`${manifest.name}: the tarball lacks ${required}`);
      }
      for (const file of files) {
        if (/\.spec(-helper|-d)?\.ts$|global-setup/.test(file))
          problems.push(`${manifest.name}: the tarball ships ${file}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('describes each package for the registry: license, repository directory, public access', async () => {
    const license = await readFile(join(REPO_ROOT, 'LICENSE'), 'utf8');
    const problems: string[] = [];
    const names = new Set(packages.map((p) => p.manifest.name));
    for (const { dir, where, manifest } of packages) {
      if (manifest.license !== 'Apache-2.0') problems.push(`${manifest.name}: license ${manifest.license}`);
      if (manifest.repository?.directory !== where || !manifest.repository.url?.includes('github.com/'))
        problems.push(`${manifest.name}: repository does not name ${where}`);
      if (manifest.publishConfig?.access !== 'public')
        problems.push(`${manifest.name}: a scoped package needs publishConfig.access public`);
      if ((await readFile(join(dir, 'LICENSE'), 'utf8')) !== license)
        problems.push(`${manifest.name}: LICENSE differs from the repository's`);
      // Sibling packages are installed by name and exact version, so they must be published too.
      for (const [dep, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
        if (dep.startsWith('@baton/') && (!names.has(dep) || range !== manifest.version))
          problems.push(
            `${manifest.name}: depends on ${dep}@${range}, not a public package at ${manifest.version}`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('installs from the tarballs, with every dependency from the registry and none missing', async () => {
    for (const { manifest } of packages) {
      const installed = join(projectDir, 'node_modules', ...manifest.name.split('/'));
      const stat = await lstat(installed);
      expect(stat.isSymbolicLink(), `${manifest.name} is a link, not an installed tarball`).toBe(false);
      expect(stat.isDirectory()).toBe(true);
    }
    const tree = await run('npm', ['ls', '--all', '--json'], { cwd: projectDir, timeoutMs: 60_000 });
    expect(tree.code, failure('npm ls (missing or invalid dependencies)', tree)).toBe(0);
  });

  it(
    'runs a workflow to completion on NATS + Redis and NATS + PostgreSQL with plain node',
    { timeout: 120_000 },
    async () => {
      const smoke = await timed('smoke', () =>
        run(process.execPath, ['smoke.mjs'], {
          cwd: projectDir,
          // A clean environment: no NODE_OPTIONS carrying the repository's source condition.
          env: {
            PATH: process.env['PATH'] ?? '',
            HOME: process.env['HOME'] ?? tmpdir(),
            SMOKE_PREFIX: prefix,
            SMOKE_NATS_URL: natsTestUrl(),
            SMOKE_REDIS_URL: redisTestUrl(),
            SMOKE_POSTGRES_URL: postgresTestUrl(),
          },
          timeoutMs: 100_000,
        }),
      );
      expect(smoke.code, failure('node smoke.mjs', smoke)).toBe(0);
      const report = JSON.parse(smoke.stdout.trim().split('\n').pop()!) as {
        runs: Record<string, { result: { n: number; quadrupled: number; runId: string }; status: string }>;
        loaded: Record<string, string>;
      };
      expect(Object.keys(report.runs)).toEqual(['nats+redis', 'nats+postgres']);
      for (const outcome of Object.values(report.runs)) {
        expect(outcome.status).toBe('completed');
        expect(outcome.result).toMatchObject({ n: 21, quadrupled: 84 });
        expect(outcome.result.runId).toMatch(/^\S+$/);
      }
      expect(report.loaded).toEqual({
        kafkaTransport: 'function',
        METRIC: 'object',
        severableStore: 'function',
        natsTestUrl: 'function',
        // Resolved inside the empty project, to the build output.
        testingMain: pathToFileURL(join(projectDir, 'node_modules', '@baton', 'testing', 'dist', 'index.js'))
          .href,
      });
    },
  );

  it(
    'runs the installed baton: npx baton --help, a listing on real servers, a refusal',
    { timeout: 90_000 },
    async () => {
      // A clean environment, as a user's shell: no NODE_OPTIONS carrying the repository's condition.
      const shell = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir() };
      const help = await run('npx', ['--no-install', 'baton', '--help'], {
        cwd: projectDir,
        env: shell,
        timeoutMs: 60_000,
      });
      expect(help.code, failure('npx baton --help', help)).toBe(0);
      expect(help.stdout).toMatch(/Commands:\s+runs\s/);
      expect(help.stdout).toMatch(/\n {2}dev /);
      const bin = join(projectDir, 'node_modules', '.bin', 'baton');
      const fleet = {
        ...shell,
        BATON_TRANSPORT_URL: natsTestUrl(),
        BATON_STORE_URL: redisTestUrl(),
        ...isolatedEnv('transport', natsTestUrl(), cliNamespace),
        ...isolatedEnv('store', redisTestUrl(), cliNamespace),
      };
      const list = await run(bin, ['runs', 'list', '--json'], {
        cwd: projectDir,
        env: fleet,
        timeoutMs: 60_000,
      });
      expect(list.code, failure('baton runs list', list)).toBe(0);
      expect(JSON.parse(list.stdout)).toEqual({ runs: [] });
      const unknown = await run(bin, ['runs', 'describe', 'no-such-run'], {
        cwd: projectDir,
        env: fleet,
        timeoutMs: 60_000,
      });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no run no-such-run in this store/);
    },
  );

  it(
    "runs the project's own TypeScript workflow with baton dev: the console, and a run over the HTTP API",
    { timeout: 120_000 },
    async () => {
      const dev = spawn(
        join(projectDir, 'node_modules', '.bin', 'baton'),
        ['dev', './workflows.ts', '--port', '0', '--no-watch'],
        {
          cwd: projectDir,
          env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir() },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const lines: string[] = [];
      createInterface({ input: dev.stdout }).on('line', (line) => lines.push(line));
      createInterface({ input: dev.stderr }).on('line', (line) => lines.push(line));
      const exited = new Promise<number | null>((done) => dev.on('exit', (code) => done(code)));
      try {
        await timed('dev start', async () => {
          const deadline = Date.now() + 60_000;
          while (!lines.some((l) => /^ {2}console {2}http:\/\//.test(l))) {
            if (Date.now() > deadline || dev.exitCode !== null)
              throw new Error(`baton dev did not print its console URL:\n${lines.join('\n')}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        });
        expect(lines[0]).toMatch(
          /^baton dev: 2 worker\(s\) running checkout@1 on the embedded bus and store/,
        );
        const base = lines
          .find((l) => /^ {2}console {2}http:\/\//.test(l))!
          .trim()
          .split(/\s+/)[1]!;
        // The console's page, from the installed package's built front-end.
        const page = await fetch(base);
        expect(page.status).toBe(200);
        expect(await page.text()).toMatch(/<html/i);
        const started = await fetch(`${base}v1/runs`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ workflow: 'checkout', input: { id: 'o-1', items: [5, 7, 30] } }),
        });
        expect(started.status).toBe(201);
        const { runId } = (await started.json()) as { runId: string };
        const result = await fetch(`${base}v1/runs/${runId}/result?wait=30s`);
        expect(result.status).toBe(200);
        expect(await result.json()).toEqual({
          runId,
          status: 'completed',
          result: { order: 'o-1', amount: 42 },
        });
      } finally {
        dev.kill('SIGTERM');
      }
      expect(await exited, lines.join('\n')).toBe(0);
    },
  );

  it('type-checks a TypeScript consumer against the packed declarations', { timeout: 120_000 }, async () => {
    await writeFile(
      join(projectDir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          // The packages' own .d.ts files are checked too, not only the consumer.
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = await timed('tsc', () =>
      run(
        process.execPath,
        [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
        {
          cwd: projectDir,
          timeoutMs: 110_000,
        },
      ),
    );
    expect(tsc.code, failure('tsc', tsc)).toBe(0);
  });
});
