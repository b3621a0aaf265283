/**
 * Every public package's committed API report matches its build output: a new, removed or
 * changed export must show up as a diff of `<package>/api-report.md` (npm run api:update).
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_BUDGETS } from './api-budgets.js';
import { apiReport, doorSizes, publicPackages, reportPath } from './api-report.js';

describe('API reports', () => {
  const packages = publicPackages();
  // Each report builds a TypeScript program over the package's .d.ts files: once per package.
  const reports = new Map<string, string>();
  const reportOf = (pkg: (typeof packages)[number]): string => {
    if (!reports.has(pkg.name)) reports.set(pkg.name, apiReport(pkg));
    return reports.get(pkg.name)!;
  };

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
      ).toBe(reportOf(pkg));
    });
  }

  for (const pkg of packages) {
    it(`${pkg.name}: every door within its budget of names (api-budgets.ts)`, () => {
      const sizes = doorSizes(reportOf(pkg));
      expect(sizes.size).toBe(pkg.doors.size);
      for (const [door, size] of sizes) {
        const budget = API_BUDGETS[door];
        expect(budget, `${door} has no budget: add one to apps/deploy/src/api-budgets.ts`).toBeDefined();
        expect(
          size,
          `${door} exports ${size} names, over its budget of ${budget!.max}: move names to the door ` +
            'of their audience, or raise the budget in review and say why',
        ).toBeLessThanOrEqual(budget!.max);
      }
    });
  }

  it('keeps no budget for a door that is gone', () => {
    const doors = new Set(packages.flatMap((pkg) => [...doorSizes(reportOf(pkg)).keys()]));
    expect(Object.keys(API_BUDGETS).filter((door) => !doors.has(door))).toEqual([]);
  });

  it('shows an export as its declaration, so a changed signature is a diff', () => {
    const core = reportOf(packages.find((p) => p.name === '@baton/core')!);
    expect(core).toMatch(/^## @baton\/core \(\d+ exports; budget \d+, target 55\)$/m);
    expect(core).toMatch(/^## @baton\/core\/runtime \(\d+ exports; budget \d+, target 110\)$/m);
    expect(core).toMatch(/^function defineWorkflow/m);
    // Authors' door holds no runtime machinery.
    const authors = core.slice(core.indexOf('## @baton/core ('), core.indexOf('## @baton/core/adapter'));
    expect(authors).not.toMatch(/ReplayExecutor|encodeMessage|memoryStore/);
  });
});
