/**
 * The README's tables of BATON_* variables are generated from `@baton/host`'s VARIABLES: this
 * fails while one is stale (a variable added, described or defaulted anew without
 * `npm run docs:variables`), as api-report.spec.ts does for the API.
 */
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '@baton/host';
import { currentReadme, generateReadme, renderTable } from './variables-doc.js';

describe("the README's tables of variables", () => {
  it('are what npm run docs:variables generates from VARIABLES', async () => {
    const readme = currentReadme();
    expect(readme === (await generateReadme(readme)), 'README.md is stale: run npm run docs:variables').toBe(
      true,
    );
  });

  it('show every variable in some table', () => {
    const readme = currentReadme();
    for (const v of VARIABLES) expect(readme, v.name).toContain(`| \`${v.name}\``);
    const tables = ['worker', 'producer', 'console'].map(renderTable).join('\n');
    for (const v of VARIABLES) expect(tables, v.name).toContain(`\`${v.name}\``);
  });

  it('names the table it does not know', () => {
    expect(() => renderTable('cli')).toThrow(/no table of variables called 'cli'/);
  });
});
