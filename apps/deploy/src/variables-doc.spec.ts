/**
 * The tables of BATON_* variables in docs/configuration.md are generated from `@baton/host`'s
 * VARIABLES: this fails while one is stale (a variable added, described or defaulted anew without
 * `npm run docs:variables`), as api-report.spec.ts does for the API.
 */
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '@baton/host';
import { currentConfigurationDoc, generateConfigurationDoc, renderTable } from './variables-doc.js';

describe("docs/configuration.md's tables of variables", () => {
  it('are what npm run docs:variables generates from VARIABLES', async () => {
    const doc = currentConfigurationDoc();
    expect(
      doc === (await generateConfigurationDoc(doc)),
      'docs/configuration.md is stale: run npm run docs:variables',
    ).toBe(true);
  });

  it('show every variable in some table', () => {
    const doc = currentConfigurationDoc();
    for (const v of VARIABLES) expect(doc, v.name).toContain(`| \`${v.name}\``);
    const tables = ['worker', 'producer', 'console'].map(renderTable).join('\n');
    for (const v of VARIABLES) expect(tables, v.name).toContain(`\`${v.name}\``);
  });

  it("rebases the descriptions' links, written from the repository root, to the page's folder", () => {
    const tables = ['worker', 'producer', 'console'].map(renderTable).join('\n');
    expect(tables).toContain('[docs/retention.md](retention.md)');
    expect(tables).toContain('](../libs/transport-redis/README.md)');
    expect(tables).not.toMatch(/\]\((docs|libs)\//);
  });

  it('names the table it does not know', () => {
    expect(() => renderTable('cli')).toThrow(/no table of variables called 'cli'/);
  });
});
