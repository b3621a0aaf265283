// Writes vitest.durations.json (read by vitest.sequencer.ts) from vitest's record of this machine's
// last runs (node_modules/.vite/vitest/*/results.json): each spec file's seconds, rounded. Run it
// (`npm run test:durations`) after a full `npm test`, and commit the file when the order matters
// (a spec that became much longer or shorter, a new long spec). Files that no longer exist are
// dropped; files this machine never ran keep their recorded value.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CACHE = 'node_modules/.vite/vitest';
const TARGET = 'vitest.durations.json';
const seconds = existsSync(TARGET) ? (JSON.parse(readFileSync(TARGET, 'utf8')).seconds ?? {}) : {};
let updated = 0;
for (const dir of existsSync(CACHE) ? readdirSync(CACHE) : []) {
  const file = join(CACHE, dir, 'results.json');
  if (!existsSync(file)) continue;
  const { projects = {} } = JSON.parse(readFileSync(file, 'utf8'));
  for (const project of Object.values(projects)) {
    for (const [spec, result] of Object.entries(project.files ?? {})) {
      if (typeof result.duration !== 'number' || result.duration <= 0) continue;
      seconds[spec] = Math.max(1, Math.round(result.duration / 1000));
      updated++;
    }
  }
}
for (const spec of Object.keys(seconds)) if (!existsSync(spec)) delete seconds[spec];
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(
  TARGET,
  `${JSON.stringify({ note: 'seconds per spec file; npm run test:durations rewrites it (vitest.sequencer.ts)', seconds: sorted }, null, 2)}\n`,
);
console.log(`${TARGET}: ${Object.keys(sorted).length} spec files (${updated} durations read from ${CACHE})`);
