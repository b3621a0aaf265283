import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helm.js';
import { CHECK_MARKER, checkSnippets, markedSnippets } from './readme-snippets.js';

const README = readFileSync(resolve(REPO_ROOT, 'README.md'), 'utf8');

describe('the README snippets marked for checking', () => {
  it('compile as written', { timeout: 120_000 }, () => {
    const snippets = markedSnippets(README);
    expect(snippets.length).toBeGreaterThan(0);
    const errors = checkSnippets(snippets).map((e) => `README.md:${e.line}: ${e.message}`);
    expect(errors).toEqual([]);
  });

  it('finds only the marked ones, and reports an error at its README line', { timeout: 120_000 }, () => {
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
    const snippets = markedSnippets(markdown);
    expect(snippets).toHaveLength(1);
    expect(snippets[0]!.line).toBe(7);
    const errors = checkSnippets(snippets);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      line: 9,
      message: expect.stringMatching(/not assignable to type 'string'/),
    });
  });

  it('takes a marker, blank lines and a ts fence, and refuses a marker before anything else', () => {
    expect(markedSnippets(`${CHECK_MARKER}\n\n\`\`\`ts\nconst a = 1;\n\`\`\``)).toEqual([
      { line: 4, code: 'const a = 1;' },
    ]);
    expect(() => markedSnippets(`${CHECK_MARKER}\n\`\`\`sh\nnpm test\n\`\`\``)).toThrow(
      /must be followed by a ```ts fence/,
    );
  });
});
