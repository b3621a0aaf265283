/**
 * Offline checks of the release workflow (.github/workflows/release.yml): the image it pushes is
 * the one the chart installs by default, the chart goes to the OCI repository the docs name, the
 * jobs run in an order that never publishes a chart before its image, and its version check
 * (.github/scripts/release-version.mjs) accepts the repository's own version and refuses others.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, REPO_ROOT } from './helm.js';

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}

interface Job {
  needs?: string | string[];
  permissions?: Record<string, string>;
  steps: Step[];
}

interface Workflow {
  on: { push?: { tags?: string[] } };
  env: Record<string, string>;
  jobs: Record<string, Job>;
}

const WORKFLOW = '.github/workflows/release.yml';
const VERSION_SCRIPT = '.github/scripts/release-version.mjs';
const workflow = parse(readFileSync(join(REPO_ROOT, WORKFLOW), 'utf8')) as Workflow;
const values = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as {
  image: { repository: string; tag: string };
};
const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as {
  name: string;
  version: string;
  appVersion: string;
};
const releasing = readFileSync(join(REPO_ROOT, 'docs', 'releasing.md'), 'utf8');

function job(name: string): Job {
  const found = workflow.jobs[name];
  expect(found, `${WORKFLOW} has no job '${name}'`).toBeDefined();
  return found!;
}

function needs(name: string): string[] {
  const value = job(name).needs ?? [];
  return Array.isArray(value) ? value : [value];
}

function step(jobName: string, action: string): Step {
  const found = job(jobName).steps.find((s) => s.uses?.split('@')[0] === action);
  expect(found, `job ${jobName} does not use ${action}`).toBeDefined();
  return found!;
}

function runScript(tag: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [join(REPO_ROOT, VERSION_SCRIPT), tag], (error, stdout, stderr) =>
      resolvePromise({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Every package of libs/ and apps/, in the order the version script reads them. */
const manifests = ['libs', 'apps'].flatMap((group) =>
  readdirSync(join(REPO_ROOT, group))
    .sort()
    .map((dir) => ({
      folder: `${group}/${dir}`,
      manifest: JSON.parse(readFileSync(join(REPO_ROOT, group, dir, 'package.json'), 'utf8')) as {
        name: string;
        private?: boolean;
        repository?: { url?: string };
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      },
    })),
);
const publicPackages = manifests
  .filter(({ manifest }) => !manifest.private)
  .map(({ manifest }) => manifest.name);

describe('the release workflow', () => {
  it('runs on version tags', () => {
    expect(workflow.on.push?.tags).toEqual(['v*']);
  });

  it("pushes exactly the image the chart's default values install", () => {
    const image = workflow.env['IMAGE'] ?? '';
    expect(image).toBe(values.image.repository);
    const build = step('image', 'docker/build-push-action');
    expect(build.with?.['push']).toBe(true);
    expect(build.with?.['file']).toBe('Dockerfile');
    expect(existsSync(join(REPO_ROOT, 'Dockerfile'))).toBe(true);
    // The tag is the release's version, which the verify job holds equal to the chart's appVersion,
    // the tag the chart uses when image.tag is empty (its default).
    expect(build.with?.['tags']).toBe('${{ env.IMAGE }}:${{ needs.verify.outputs.version }}');
    expect(values.image.tag).toBe('');
    const login = step('image', 'docker/login-action');
    expect(
      image.startsWith(`${login.with?.['registry']}/`),
      `${image} is not on the registry it logs in to`,
    ).toBe(true);
    expect(job('image').permissions?.['packages']).toBe('write');
  });

  it('pushes the chart as an OCI artifact after the image it names, to the repository the docs name', () => {
    expect(needs('chart')).toEqual(expect.arrayContaining(['verify', 'image']));
    const repository = workflow.env['CHART_REPOSITORY']!;
    expect(repository).toMatch(/^oci:\/\//);
    const script = job('chart')
      .steps.map((s) => s.run ?? '')
      .join('\n');
    expect(script).toContain('helm package helm/baton-worker');
    expect(script).toContain(`helm push ".tmp/chart/${chart.name}-\${VERSION}.tgz" "$CHART_REPOSITORY"`);
    // Both live under the same registry owner.
    const owner = (ref: string) =>
      ref
        .replace(/^oci:\/\//, '')
        .split('/')
        .slice(0, 2)
        .join('/');
    expect(owner(repository)).toBe(owner(workflow.env['IMAGE']!));
    expect(releasing).toContain(`${repository}/${chart.name}`);
    expect(releasing).toContain(workflow.env['IMAGE']);
  });

  it('publishes the npm packages the version check lists, with provenance', () => {
    expect(needs('npm')).toContain('verify');
    expect(job('npm').permissions?.['id-token']).toBe('write');
    const script = job('npm')
      .steps.map((s) => s.run ?? '')
      .join('\n');
    expect(script).toContain('npm publish --provenance');
    const publish = job('npm').steps.find((s) => s.run?.includes('npm publish'));
    expect(publish?.env?.['PACKAGES']).toBe('${{ needs.verify.outputs.packages }}');
  });

  it('verifies before publishing: every job but verify needs it, and the specs it runs exist', () => {
    for (const name of Object.keys(workflow.jobs).filter((n) => n !== 'verify'))
      expect(needs(name), `job ${name}`).toContain('verify');
    const commands = job('verify')
      .steps.map((s) => s.run ?? '')
      .join('\n');
    expect(commands).toContain(`node ${VERSION_SCRIPT} "$GITHUB_REF_NAME"`);
    const specs = commands.match(/\S+\.spec\.ts/g) ?? [];
    expect(specs).toContain('apps/deploy/src/release.spec.ts');
    for (const spec of specs) expect(existsSync(join(REPO_ROOT, spec)), spec).toBe(true);
  });

  it('names one GitHub owner for the packages, the image and the chart', () => {
    const owner = workflow.env['IMAGE']!.split('/')[1];
    for (const { folder, manifest } of manifests) {
      if (!manifest.private) expect(manifest.repository?.url, folder).toContain(`github.com/${owner}/`);
    }
    expect(readFileSync(join(CHART_DIR, 'README.md'), 'utf8')).toContain(`FROM ${workflow.env['IMAGE']}`);
  });

  it('is documented: docs/releasing.md is linked from the README and says nothing was published', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain('(docs/releasing.md)');
    expect(releasing).toMatch(/^Status: .*nothing has been published/im);
  });
});

describe('the public packages', () => {
  it('include the CLI and the console; the worker app, the demo and the bench stay private', () => {
    expect(publicPackages).toEqual(expect.arrayContaining(['@baton/cli', '@baton/console', '@baton/host']));
    for (const name of ['@baton/worker-app', '@baton/demo', '@baton/bench'])
      expect(publicPackages).not.toContain(name);
  });

  it('take third-party packages by compatible ranges and @opentelemetry/api as a peer', () => {
    // An exact pin in a library makes npm install a second copy beside the user's own; a second
    // @opentelemetry/api would not see the SDK the user registered, and no span or metric would
    // reach it. Sibling @baton packages are exact: they are released together.
    const problems: string[] = [];
    for (const { folder, manifest } of manifests) {
      if (manifest.private) continue;
      for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
        if (dep === '@opentelemetry/api') problems.push(`${folder}: ${dep} must be a peer dependency`);
        else if (!dep.startsWith('@baton/') && !/^\^\d/.test(range))
          problems.push(`${folder}: ${dep}@${range} is not a caret range`);
      }
      const otel = manifest.peerDependencies?.['@opentelemetry/api'];
      if (otel !== undefined && !/^\^1\./.test(otel)) problems.push(`${folder}: @opentelemetry/api@${otel}`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the release version check', () => {
  it("accepts a tag naming the repository's version and lists the public packages", async () => {
    const result = await runScript(`v${chart.version}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      `version=${chart.version}`,
      `packages=${publicPackages.join(' ')}`,
    ]);
    expect(chart.appVersion).toBe(chart.version);
  });

  it('refuses a tag whose version the chart and packages do not carry, naming each file', async () => {
    const result = await runScript('v99.0.0');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('helm/baton-worker/Chart.yaml: version is');
    expect(result.stderr).toContain('helm/baton-worker/Chart.yaml: appVersion is');
    expect(result.stderr).toContain('libs/core/package.json: version is');
  });

  it('refuses a tag that is not v<semver>', async () => {
    const result = await runScript('release-1');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/release tag 'release-1' is not v<major>\.<minor>\.<patch>/);
  });
});
