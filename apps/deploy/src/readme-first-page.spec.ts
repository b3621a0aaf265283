/**
 * The README stays a first page (first-page.ts): within its line budget, every relative link of
 * README.md, docs/*.md and the other READMEs resolves (file, and heading anchor), and every command of the README's
 * ```sh blocks is one a spec or CI runs. Then the checks themselves, on made-up pages, so that a
 * broken link or an unlisted command would be caught.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  brokenLinks,
  headingSlug,
  headingSlugs,
  linkedPages,
  README_COMMANDS,
  README_LINE_BUDGET,
  relativeLinks,
  shellCommands,
} from './first-page.js';
import { REPO_ROOT } from './helm.js';

const read = (path: string): string => readFileSync(resolve(REPO_ROOT, path), 'utf8');
const README = read('README.md');

describe('the README as a first page', () => {
  it(`is at most ${README_LINE_BUDGET} lines`, () => {
    const lines = README.trimEnd().split('\n').length;
    expect(lines, 'move a section to docs/ and link it').toBeLessThanOrEqual(README_LINE_BUDGET);
  });

  it('links only to files and headings that exist, as every page of docs/ and every README does', () => {
    const pages = linkedPages();
    expect(pages).toEqual(
      expect.arrayContaining(['README.md', 'docs/configuration.md', 'helm/baton-worker/README.md']),
    );
    const problems = pages.flatMap((page) => brokenLinks(page, read(page)));
    expect(problems).toEqual([]);
  });

  it('shows only commands a spec or CI runs, each listed with what runs it', () => {
    const shown = shellCommands(README);
    expect(shown.length).toBeGreaterThan(0);
    const listed = README_COMMANDS.map((c) => c.command);
    expect(
      shown.filter((c) => !listed.includes(c)),
      'add each to README_COMMANDS (first-page.ts) with the spec or CI step that runs it',
    ).toEqual([]);
    expect(
      listed.filter((c) => !shown.includes(c)),
      'no longer in the README: remove from README_COMMANDS',
    ).toEqual([]);
  });

  it.each(README_COMMANDS)('$command: is run by what README_COMMANDS names', ({ runBy }) => {
    expect(runBy.length).toBeGreaterThan(0);
    for (const { file, text } of runBy) expect(read(file), file).toContain(text);
  });
});

describe('the first-page checks', () => {
  it('slug headings as GitHub does', () => {
    expect(headingSlug('Run a fleet with Docker Compose')).toBe('run-a-fleet-with-docker-compose');
    expect(headingSlug('`/healthz`: liveness')).toBe('healthz-liveness');
    expect(headingSlug("Upgrading to group commit (the journal's format, not a workflow's)")).toBe(
      'upgrading-to-group-commit-the-journals-format-not-a-workflows',
    );
    expect(headingSlug("The console's run page with 1,000 steps (2026-11-25)")).toBe(
      'the-consoles-run-page-with-1000-steps-2026-11-25',
    );
    expect([...headingSlugs('# A\n\n```sh\n# not a heading\n```\n\n## A\n')]).toEqual(['a', 'a-1']);
  });

  it('read links outside code only, across lines, and leave URLs alone', () => {
    const page = [
      'See [the guide](docs/guide.md#intro) and [a site](https://example.com/x.md),',
      '[a link whose text',
      'wraps](#local) and `[code](not-a-link.md)`.',
      '```sh',
      'echo "[x](fenced.md)"',
      '```',
      '![a picture](docs/shot.png "title")',
    ].join('\n');
    expect(relativeLinks(page)).toEqual([
      { line: 1, target: 'docs/guide.md#intro' },
      { line: 3, target: '#local' },
      { line: 7, target: 'docs/shot.png' },
    ]);
  });

  it('report a missing file, a missing heading and a missing local heading', () => {
    const page = [
      '# Here',
      '[ok](docs/configuration.md#worker-process-environment) [ok](#here)',
      '[gone](docs/no-such-page.md) [no heading](docs/configuration.md#no-such-heading) [no local](#there)',
    ].join('\n');
    expect(brokenLinks('README.md', page)).toEqual([
      'README.md:3: docs/no-such-page.md: no such file (docs/no-such-page.md)',
      'README.md:3: docs/configuration.md#no-such-heading: docs/configuration.md has no heading with this anchor',
      'README.md:3: #there: README.md has no heading with this anchor',
    ]);
  });

  it("take each sh block's commands, continuations joined and comments dropped", () => {
    const page = [
      '```sh',
      'export A=1   # the first',
      '',
      'helm install x ./chart \\',
      '  --set a=b',
      '```',
      '```ts',
      'const notShell = 1;',
      '```',
      '```bash',
      'npm test',
      '```',
    ].join('\n');
    expect(shellCommands(page)).toEqual(['export A=1', 'helm install x ./chart --set a=b', 'npm test']);
  });
});
