// Prints what the test phase spent, from vitest's JSON report (the path is the first argument): per
// project (the naming rules of vitest.projects.ts, which vitest.config.ts builds its projects from)
// the wall time from its first file's start to its last file's end and the sum of its files' times,
// then the slowest files. Nothing is asserted: it is there so that a slow phase in CI names what
// made it slow. Node (22.18 and later) strips the rules file's types as it loads it.
import { readFileSync } from 'node:fs';
import { PROJECT_ORDER, projectOf } from '../vitest.projects.ts';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const files = report.testResults
  .filter((r) => typeof r.startTime === 'number' && typeof r.endTime === 'number')
  .map((r) => ({
    file: r.name.replace(`${process.cwd()}/`, ''),
    start: r.startTime,
    end: r.endTime,
    seconds: (r.endTime - r.startTime) / 1000,
  }));
const lines = [];
for (const project of PROJECT_ORDER) {
  const own = files.filter((f) => projectOf(f.file) === project);
  if (own.length === 0) continue;
  const wall = (Math.max(...own.map((f) => f.end)) - Math.min(...own.map((f) => f.start))) / 1000;
  const sum = own.reduce((total, f) => total + f.seconds, 0);
  lines.push(`${project}: ${own.length} files, wall ${wall.toFixed(0)} s, files' sum ${sum.toFixed(0)} s`);
}
const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, 12);
console.log(`test time by project: ${lines.join('; ')}`);
console.log(`slowest files: ${slowest.map((f) => `${f.file} ${f.seconds.toFixed(0)} s`).join(', ')}`);
