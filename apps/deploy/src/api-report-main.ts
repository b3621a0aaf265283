/** `npm run api:update`: rewrites every public package's api-report.md from its build output. */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { relative } from 'node:path';
import { apiReport, publicPackages, reportPath, REPO } from './api-report.js';

let changed = 0;
for (const pkg of publicPackages()) {
  const path = reportPath(pkg);
  const next = apiReport(pkg);
  if (existsSync(path) && readFileSync(path, 'utf8') === next) continue;
  writeFileSync(path, next);
  changed++;
  console.log(`updated ${relative(REPO, path)}`);
}
console.log(
  changed === 0 ? 'every API report is up to date' : `${changed} API report(s) updated: review the diff`,
);
