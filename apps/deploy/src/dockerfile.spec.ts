/**
 * Offline checks of the Dockerfile and .dockerignore (no Docker engine needed): the file is split
 * into stages and instructions, and what the image build relies on is checked against the source
 * tree: base images, the non-root user, every path copied from the build context (present, and not
 * excluded by .dockerignore), the workspace packages the runtime needs, the entrypoint and the
 * health probe. Failures name the instruction, path or package.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const WORKER_APP = 'apps/worker';
/** The `baton` CLI, whose `baton console` serves the web console from the same image. */
const CLI_APP = 'apps/cli';
const CONSOLE_APP = 'libs/console';

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

interface Stage {
  name: string;
  image: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into global ARGs and stages (line continuations joined, comments dropped). */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, ' ');
      i += 1;
      if (!/^\s*#/.test(lines[i]!)) line += lines[i]!;
    }
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) throw new Error(`Dockerfile line ${start} cannot be read: ${line}`);
    const keyword = match[1]!.toUpperCase();
    const rest = match[2]!.trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!from) throw new Error(`Dockerfile line ${start}: FROM ${rest} cannot be read`);
      const image = from[1]!.replace(/\$\{?(\w+)\}?/g, (_, name: string) => args[name] ?? `<${name} unset>`);
      stages.push({ name: from[2] ?? String(stages.length), image, instructions: [] });
    } else if (stages.length === 0) {
      if (keyword !== 'ARG') throw new Error(`Dockerfile line ${start}: ${keyword} before the first FROM`);
      const [name, value = ''] = rest.split('=', 2);
      args[name!.trim()] = value.trim();
    } else {
      stages.at(-1)!.instructions.push({ keyword, args: rest, line: start });
    }
  }
  return { args, stages };
}

/** `["a", "b"]` (exec form) or `a b` (shell form) -> words. */
function words(args: string): string[] {
  const trimmed = args.trim();
  if (trimmed.startsWith('[')) return JSON.parse(trimmed) as string[];
  return trimmed.split(/\s+/);
}

interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
  line: number;
}

function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => {
      const parts = words(i.args);
      const flags = parts.filter((p) => p.startsWith('--'));
      const paths = parts.filter((p) => !p.startsWith('--'));
      const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
      return { from, sources: paths.slice(0, -1), destination: paths.at(-1)!, line: i.line };
    });
}

/** .dockerignore patterns as regular expressions over context-relative paths. */
function dockerignoreMatchers(text: string): { pattern: string; regex: RegExp }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((raw) => {
      if (raw.startsWith('!'))
        throw new Error(`.dockerignore: exceptions (${raw}) are not understood by this check`);
      const pattern = posix.normalize(raw.replace(/^\/+/, '')).replace(/\/$/, '');
      let source = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (pattern.startsWith('**/', i)) {
          source += '(?:.*/)?';
          i += 2;
        } else if (pattern.startsWith('**', i)) {
          source += '.*';
          i += 1;
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { pattern: raw, regex: new RegExp(`^${source}$`) };
    });
}

/** The .dockerignore pattern that keeps `path` (or a folder above it) out of the context, if any. */
function excludedBy(path: string, matchers: { pattern: string; regex: RegExp }[]): string | undefined {
  const parts = posix.normalize(path).replace(/\/$/, '').split('/');
  for (let n = 1; n <= parts.length; n++) {
    const prefix = parts.slice(0, n).join('/');
    const hit = matchers.find((m) => m.regex.test(prefix));
    if (hit) return hit.pattern;
  }
  return undefined;
}

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
}

/** Every workspace package (the root package.json's `<folder>/*` globs): name -> its folder and manifest. */
function workspaces(): Map<string, { dir: string; pkg: PackageJson }> {
  const root = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { workspaces: string[] };
  const found = new Map<string, { dir: string; pkg: PackageJson }>();
  for (const glob of root.workspaces) {
    const parent = glob.replace(/\/\*$/, '');
    for (const entry of readdirSync(join(REPO, parent), { withFileTypes: true })) {
      const dir = `${parent}/${entry.name}`;
      if (!entry.isDirectory() || !existsSync(join(REPO, dir, 'package.json'))) continue;
      const pkg = JSON.parse(readFileSync(join(REPO, dir, 'package.json'), 'utf8')) as PackageJson;
      found.set(pkg.name, { dir, pkg });
    }
  }
  return found;
}

/** Workspace folders reachable from `dir` through dependencies (and devDependencies, at every level, when asked). */
function workspaceClosure(dir: string, withDev: boolean): Set<string> {
  const all = workspaces();
  const byDir = new Map([...all.values()].map((w) => [w.dir, w.pkg]));
  const seen = new Set<string>();
  const visit = (d: string): void => {
    if (seen.has(d)) return;
    seen.add(d);
    const pkg = byDir.get(d)!;
    for (const name of Object.keys({ ...pkg.dependencies, ...(withDev ? pkg.devDependencies : {}) })) {
      const ws = all.get(name);
      if (ws) visit(ws.dir);
    }
  };
  visit(dir);
  return seen;
}

const dockerfile = parseDockerfile(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));
const dockerignoreText = existsSync(join(REPO, '.dockerignore'))
  ? readFileSync(join(REPO, '.dockerignore'), 'utf8')
  : '';
const ignore = dockerignoreMatchers(dockerignoreText);
const runtime = dockerfile.stages.at(-1)!;
const build = dockerfile.stages.find((s) => s.name === 'build');

function last(stage: Stage, keyword: string): Instruction | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1);
}

function workdirOf(stage: Stage): string {
  return last(stage, 'WORKDIR')?.args ?? '/';
}

describe('Dockerfile', () => {
  it('builds on a Node LTS slim image (22 or newer, even-numbered) in every stage', () => {
    const problems: string[] = [];
    for (const stage of dockerfile.stages) {
      const match = /^node:(\d+)(?:\.\d+){0,2}-[a-z]+-slim(?:@sha256:[0-9a-f]{64})?$/.exec(stage.image);
      if (!match) problems.push(`stage ${stage.name}: '${stage.image}' is not node:<version>-<distro>-slim`);
      else if (Number(match[1]) < 22 || Number(match[1]) % 2 !== 0) {
        problems.push(`stage ${stage.name}: Node ${match[1]} is not a supported LTS (22, 24, …)`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('has a build stage and a separate runtime stage', () => {
    expect(build, 'no stage named build').toBeDefined();
    expect(runtime.name, 'the last stage is the image; it must not be the build stage').not.toBe('build');
    expect(workdirOf(runtime)).toBe('/app');
  });

  it('runs the runtime stage as a non-root user with a fixed id', () => {
    const user = last(runtime, 'USER');
    expect(user, `stage ${runtime.name} has no USER`).toBeDefined();
    const [name, group] = user!.args.split(':');
    expect(['root', '0'], `USER ${user!.args} is root`).not.toContain(name);
    expect(['root', '0'], `USER ${user!.args} has the root group`).not.toContain(group);
    const created = runtime.instructions.some(
      (i) => i.keyword === 'RUN' && new RegExp(`useradd\\b[^&]*--uid ${name}\\b`).test(i.args),
    );
    expect(/^\d+$/.test(name!) && created, `USER ${name} is not a uid created with useradd --uid`).toBe(true);
  });

  it('copies from the build context only paths that exist and .dockerignore lets in', () => {
    const problems: string[] = [];
    for (const stage of dockerfile.stages) {
      for (const copy of copiesOf(stage).filter((c) => c.from === undefined)) {
        for (const source of copy.sources) {
          const path = source.replace(/^\.?\/+/, '');
          if (!existsSync(join(REPO, path))) problems.push(`line ${copy.line}: COPY ${source}: no such path`);
          const pattern = excludedBy(path, ignore);
          if (pattern !== undefined)
            problems.push(`line ${copy.line}: COPY ${source} is excluded by .dockerignore '${pattern}'`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('copies from the build stage only the dist folders its build produces', () => {
    const problems: string[] = [];
    const buildDir = build ? workdirOf(build) : '/';
    for (const copy of copiesOf(runtime).filter((c) => c.from !== undefined)) {
      for (const source of copy.sources) {
        if (copy.from !== 'build')
          problems.push(`line ${copy.line}: COPY --from=${copy.from} is not the build stage`);
        const match = new RegExp(`^${buildDir}/((?:apps|libs)/[^/]+)/dist$`).exec(source);
        if (!match) {
          problems.push(`line ${copy.line}: COPY --from=build ${source} is not ${buildDir}/<package>/dist`);
          continue;
        }
        const config = join(REPO, match[1]!, 'tsconfig.build.json');
        if (!existsSync(config))
          problems.push(`line ${copy.line}: ${match[1]} has no tsconfig.build.json to produce dist`);
        else if (!/"outDir"\s*:\s*"dist"/.test(readFileSync(config, 'utf8'))) {
          problems.push(`line ${copy.line}: ${match[1]}/tsconfig.build.json does not emit to dist`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives the runtime every workspace package the worker and the CLI import: its package.json and dist', () => {
    const copies = copiesOf(runtime);
    const manifests = new Set(copies.filter((c) => !c.from).flatMap((c) => c.sources));
    const dists = new Set(copies.filter((c) => c.from).flatMap((c) => c.sources));
    const buildDir = build ? workdirOf(build) : '/';
    const problems: string[] = [];
    for (const dir of new Set([
      ...workspaceClosure(WORKER_APP, false),
      ...workspaceClosure(CLI_APP, false),
    ])) {
      if (!manifests.has(`${dir}/package.json`))
        problems.push(`runtime stage does not copy ${dir}/package.json`);
      if (!dists.has(`${buildDir}/${dir}/dist`))
        problems.push(`runtime stage does not copy ${dir}/dist from build`);
    }
    expect(problems).toEqual([]);
  });

  it('gives the build stage the manifest of every workspace on the worker and CLI build paths', () => {
    // A workspace npm ci cannot link would be looked up on the registry instead.
    const manifests = new Set(copiesOf(build!).flatMap((c) => c.sources));
    const problems: string[] = [];
    for (const dir of new Set([...workspaceClosure(WORKER_APP, true), ...workspaceClosure(CLI_APP, true)])) {
      if (!manifests.has(`${dir}/package.json`))
        problems.push(`build stage does not copy ${dir}/package.json`);
    }
    expect(problems).toEqual([]);
  });

  it('installs production dependencies only in the runtime stage', () => {
    const env = runtime.instructions.filter((i) => i.keyword === 'ENV').map((i) => i.args);
    expect(
      env.some((e) => /\bNODE_ENV=production\b/.test(e)),
      'runtime stage lacks ENV NODE_ENV=production',
    ).toBe(true);
    // The bench runs its workers with the image's NODE_OPTIONS (IMAGE_NODE_OPTIONS in
    // libs/testing/src/crash/worker-processes.ts): keep the two the same.
    const bench = readFileSync(join(REPO, 'libs/testing/src/crash/worker-processes.ts'), 'utf8');
    const benchOptions = /IMAGE_NODE_OPTIONS = '([^']*)'/.exec(bench)?.[1];
    expect(benchOptions, 'IMAGE_NODE_OPTIONS not found in worker-processes.ts').toBeDefined();
    expect(
      env.some((e) => e.includes(`NODE_OPTIONS=${benchOptions}`)),
      `runtime stage's NODE_OPTIONS differ from the bench's (${benchOptions})`,
    ).toBe(true);
    const installs = runtime.instructions.filter(
      (i) => i.keyword === 'RUN' && /\bnpm (ci|install)\b/.test(i.args),
    );
    expect(installs.length, 'runtime stage installs nothing').toBeGreaterThan(0);
    for (const install of installs) {
      expect(install.args, `line ${install.line}: npm without --omit=dev`).toMatch(/--omit=dev/);
    }
  });

  it('starts the worker process, whose source exists; the producer is in the image too', () => {
    const entrypoint = last(runtime, 'ENTRYPOINT');
    expect(entrypoint, 'no ENTRYPOINT').toBeDefined();
    const argv = words(entrypoint!.args);
    expect(argv[0]).toBe('node');
    const target = argv[1]!;
    const match = /^((?:apps|libs)\/[^/]+)\/dist\/(.+)\.js$/.exec(target);
    expect(match, `ENTRYPOINT ${target} is not <package>/dist/<file>.js`).not.toBeNull();
    const source = `${match![1]}/src/${match![2]}.ts`;
    expect(existsSync(join(REPO, source)), `ENTRYPOINT ${target}: ${source} does not exist`).toBe(true);
    expect(target).toBe(`${WORKER_APP}/dist/main.js`);
    expect(existsSync(join(REPO, WORKER_APP, 'src/producer-main.ts')), 'producer-main.ts is missing').toBe(
      true,
    );
  });

  it('builds the CLI and the console, installs their dependencies and puts `baton` on the PATH', () => {
    const cli = workspaces().get('@baton/cli');
    expect(cli?.dir, 'no @baton/cli workspace').toBe(CLI_APP);
    const bin = (cli!.pkg as PackageJson & { bin?: Record<string, string> }).bin?.baton;
    // The package's bin is the checked-in launcher (it exists at `npm ci`, before any build, so npm
    // links it); the image links the built entry point directly.
    expect(bin, 'apps/cli/package.json has no bin.baton').toBe('./bin/baton.js');
    expect(readFileSync(join(REPO, CLI_APP, 'bin/baton.js'), 'utf8')).toContain("'../dist/main.js'");
    // The build stage builds the CLI (whose ^build builds the console's server and front-end).
    const builds = build!.instructions.filter((i) => i.keyword === 'RUN' && /\bnx\b/.test(i.args));
    expect(
      builds.some((i) => i.args.includes('@baton/cli')),
      'the build stage does not build @baton/cli',
    ).toBe(true);
    // The console's front-end is built by its package's build script into dist/public, which the
    // runtime gets with the rest of libs/console/dist.
    const consolePkg = workspaces().get('@baton/console')!.pkg;
    expect(consolePkg.scripts?.build, 'the console build does not run vite').toMatch(/\bvite build\b/);
    expect(readFileSync(join(REPO, CONSOLE_APP, 'vite.config.ts'), 'utf8')).toMatch(
      /outDir: '\.\.\/dist\/public'/,
    );
    const install = runtime.instructions.find((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(install?.args, 'the runtime npm ci does not install the CLI workspace').toMatch(
      /--workspace @baton\/cli\b/,
    );
    const link = runtime.instructions.find((i) => i.keyword === 'RUN' && /\bln -s\b/.test(i.args));
    expect(link?.args, 'no `ln -s` putting baton on the PATH').toBe(
      `ln -s ${workdirOf(runtime)}/${CLI_APP}/dist/main.js /usr/local/bin/baton`,
    );
    expect(readFileSync(join(REPO, CLI_APP, 'src/main.ts'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(
      true,
    );
    expect(cli!.pkg.scripts?.build, 'the CLI build does not make main.js executable').toContain('chmodSync');
    expect(last(runtime, 'EXPOSE')?.args.split(/\s+/)).toContain('8636');
  });

  it('probes /healthz with node on the exposed port, and stops with SIGTERM', () => {
    expect(last(runtime, 'EXPOSE')?.args.split(/\s+/)).toContain('8080');
    expect(last(runtime, 'STOPSIGNAL')?.args).toBe('SIGTERM');
    const healthcheck = last(runtime, 'HEALTHCHECK');
    expect(healthcheck, 'no HEALTHCHECK').toBeDefined();
    const command = healthcheck!.args.replace(/^(--\S+\s+)*CMD\s+/, '');
    const argv = words(command);
    expect(argv[0], 'the slim image has no curl or wget: probe with node').toBe('node');
    const script = argv.join(' ');
    expect(script).toContain('/healthz');
    expect(script).toContain('process.env.BATON_HTTP_PORT || 8080');
  });
});

describe('.dockerignore', () => {
  it.each(['node_modules', 'libs/core/node_modules', '.git', '.tmp', 'libs/core/dist'])(
    'keeps %s out of the build context',
    (path) => {
      expect(excludedBy(path, ignore), `.dockerignore does not exclude ${path}`).toBeDefined();
    },
  );

  it('lets the sources in', () => {
    for (const path of [
      'package.json',
      'package-lock.json',
      'libs/core/src/author/index.ts',
      `${WORKER_APP}/src/main.ts`,
    ]) {
      expect(excludedBy(path, ignore), `.dockerignore excludes ${path}`).toBeUndefined();
    }
  });
});
