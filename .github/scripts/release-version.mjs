// Checks that a release tag names the version of everything the release publishes, and prints what
// the release workflow needs, as GitHub Actions outputs (`name=value` lines):
//
//   node .github/scripts/release-version.mjs v0.2.0
//   version=0.2.0
//   packages=@baton/client @baton/core ...
//
// The tag must be `v<version>`, and <version> must be the chart's `version` and `appVersion` (the
// chart's default image tag) and the `version` of every public package in libs/ and apps/ (the
// libraries, @baton/console and @baton/cli; the worker app, the demo, the bench stay private). On a mismatch it
// names each file to fix and exits 1, before anything is built or pushed.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tag = process.argv[2] ?? '';
const match = /^v(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(tag);
if (!match) {
  console.error(`release tag '${tag}' is not v<major>.<minor>.<patch>[-<prerelease>], e.g. v0.2.0`);
  process.exit(1);
}
const version = match[1];

/** The value of a top-level `key: value` line of Chart.yaml (quotes removed). */
function chartField(text, key) {
  const line = new RegExp(`^${key}:\\s*(.+?)\\s*$`, 'm').exec(text);
  return line ? line[1].replace(/^['"]|['"]$/g, '') : undefined;
}

const problems = [];
const chartPath = 'helm/baton-worker/Chart.yaml';
const chart = readFileSync(join(repo, chartPath), 'utf8');
for (const key of ['version', 'appVersion']) {
  const value = chartField(chart, key);
  if (value !== version) problems.push(`${chartPath}: ${key} is ${value}, the tag says ${version}`);
}
const packages = [];
const folders = ['libs', 'apps'].flatMap((group) =>
  readdirSync(join(repo, group))
    .sort()
    .map((dir) => `${group}/${dir}`),
);
for (const folder of folders) {
  const path = `${folder}/package.json`;
  const manifest = JSON.parse(readFileSync(join(repo, path), 'utf8'));
  if (manifest.private) continue;
  packages.push(manifest.name);
  if (manifest.version !== version)
    problems.push(`${path}: version is ${manifest.version}, the tag says ${version}`);
  for (const [dep, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
    if (dep.startsWith('@baton/') && range !== version)
      problems.push(
        `${path}: depends on ${dep}@${range}; sibling packages are released together at ${version}`,
      );
  }
}
if (problems.length > 0) {
  console.error(`release ${tag} does not match the repository:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`version=${version}`);
console.log(`packages=${packages.join(' ')}`);
