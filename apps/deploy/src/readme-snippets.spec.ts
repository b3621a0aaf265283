/**
 * The snippets marked `<!-- check: typescript -->` in README.md and the pages of docs/ compile as
 * written (readme-snippets.ts); the README's workflow example and the API guide's are among them.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docPages } from './first-page.js';
import { REPO_ROOT } from './helm.js';
import { CHECK_MARKER, checkSnippets, markedSnippets } from './readme-snippets.js';

describe('the README and docs snippets marked for checking', () => {
  it('compile as written', { timeout: 120_000 }, () => {
    const snippets = docPages().flatMap((page) =>
      markedSnippets(readFileSync(resolve(REPO_ROOT, page), 'utf8'), page),
    );
    const count = (page: string): number => snippets.filter((s) => s.source === page).length;
    expect(count('README.md')).toBeGreaterThan(0);
    expect(count('docs/workflows.md')).toBeGreaterThan(0);
    const errors = checkSnippets(snippets).map((e) => `${e.source}:${e.line}: ${e.message}`);
    expect(errors).toEqual([]);
  });

  it('finds only the marked ones, and reports an error at its line in its file', { timeout: 120_000 }, () => {
    const markdown = [
      '```ts',
      'const unchecked: number = "not marked";',
      '```',
      CHECK_MARKER,
      '',
      '```ts',
      "import { defineWorkflow } from '@baton/core';",
      "export const w = defineWorkflow({ name: 'w', version: 1, run: async () => 1 });",
      'const wrong: string = w.version;',
      '```',
    ].join('\n');
    const snippets = markedSnippets(markdown, 'docs/example.md');
    expect(snippets).toHaveLength(1);
    expect(snippets[0]!.line).toBe(7);
    const errors = checkSnippets(snippets);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      source: 'docs/example.md',
      line: 9,
      message: expect.stringMatching(/not assignable to type 'string'/),
    });
  });

  it('compiles snippets of two files at the same line apart', { timeout: 120_000 }, () => {
    const page = (code: string): string => [CHECK_MARKER, '', '```ts', code, '```'].join('\n');
    const snippets = [
      ...markedSnippets(page('export const a: number = 1;'), 'README.md'),
      ...markedSnippets(page("export const a: number = 'two';"), 'docs/example.md'),
    ];
    expect(snippets.map((s) => s.line)).toEqual([4, 4]);
    expect(checkSnippets(snippets)).toEqual([
      expect.objectContaining({ source: 'docs/example.md', line: 4 }),
    ]);
  });

  it('takes a marker, blank lines and a ts fence, and refuses a marker before anything else', () => {
    expect(markedSnippets(`${CHECK_MARKER}\n\n\`\`\`ts\nconst a = 1;\n\`\`\``, 'README.md')).toEqual([
      { source: 'README.md', line: 4, code: 'const a = 1;' },
    ]);
    expect(() => markedSnippets(`${CHECK_MARKER}\n\`\`\`sh\nnpm test\n\`\`\``, 'docs/x.md')).toThrow(
      /docs\/x.md:1: .* must be followed by a ```ts fence/,
    );
  });
});
