/**
 * Every public package's committed API report matches its build output: a new, removed or
 * changed export must show up as a diff of `<package>/api-report.md` (npm run api:update).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { apiReport, publicPackages, reportPath } from './api-report.js';

describe('API reports', () => {
  const packages = publicPackages();

  it('covers every public package, each door typed', () => {
    expect(packages.map((p) => p.name)).toContain('@baton/core');
    const core = packages.find((p) => p.name === '@baton/core')!;
    expect([...core.doors.keys()]).toEqual(['.', './adapter', './runtime', './memory']);
  });

  for (const pkg of packages) {
    it(`${pkg.name}: api-report.md is up to date (npm run api:update)`, () => {
      const path = reportPath(pkg);
      expect(existsSync(path), `${path} is missing: run npm run api:update`).toBe(true);
      expect(
        readFileSync(path, 'utf8'),
        `${pkg.name}'s API changed: run npm run api:update and review the diff`,
      ).toBe(apiReport(pkg));
    });
  }

  it('shows an export as its declaration, so a changed signature is a diff', () => {
    const core = apiReport(packages.find((p) => p.name === '@baton/core')!);
    expect(core).toMatch(/^## @baton\/core \(\d+ exports\)$/m);
    expect(core).toMatch(/^## @baton\/core\/runtime \(\d+ exports\)$/m);
    expect(core).toMatch(/^function defineWorkflow/m);
    // Authors' door holds no runtime machinery.
    const authors = core.slice(core.indexOf('## @baton/core ('), core.indexOf('## @baton/core/adapter'));
    expect(authors).not.toMatch(/ReplayExecutor|encodeMessage|memoryStore/);
  });
});
