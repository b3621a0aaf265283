/**
 * Repeated code in the production sources, found with jscpd (token-based clone detection), and
 * compared with a committed baseline: `npm run check` fails when a change adds a clone the
 * baseline does not hold, so copied code is caught before review instead of after it.
 *
 * What counts: the TypeScript of every package's `src/` (libs, apps, tests), specs and spec helpers
 * left out (a test repeating its setup is readable, not a defect). A clone is at least
 * {@link MIN_LINES} lines and {@link MIN_TOKENS} tokens the same to the token (names included).
 *
 * The baseline counts clones per pair of files, not per line range, so moving code within a file
 * does not disturb it. A pair with more clones than the baseline holds fails; a pair with fewer
 * fails too until the baseline is lowered (`npm run repeated:update`), so the baseline only ever
 * shrinks by hand and never hides a new clone behind an old one's removal.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Jscpd from 'jscpd';

// jscpd's ES module build imports a CommonJS package (colors) by named exports, which Node refuses;
// its CommonJS build loads.
const { detectClones } = createRequire(import.meta.url)('jscpd') as typeof Jscpd;

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const BASELINE_FILE = join(REPO, 'apps/deploy/repeated-code-baseline.json');

/** The shortest clone reported, in lines and in tokens (both must hold). */
export const MIN_LINES = 8;
export const MIN_TOKENS = 80;

/** One clone: the two places, as `file:first-last` relative to the repository. */
export interface Clone {
  a: string;
  b: string;
  lines: number;
}

/** Clones per pair of files, keyed `fileA ~ fileB` (the two in sorted order). */
export type CloneCounts = Record<string, number>;

/** Finds the clones among `paths` (folders below the repository). */
export async function findClones(paths: readonly string[] = ['libs', 'apps', 'tests']): Promise<Clone[]> {
  const clones = await detectClones({
    path: paths.map((path) => join(REPO, path)),
    format: ['typescript'],
    pattern: '**/src/**/*.ts',
    ignore: [
      '**/node_modules/**',
      '**/dist/**',
      '**/*.spec.ts',
      '**/*.spec-helper.ts',
      '**/*.spec-d.ts',
      '**/*.d.ts',
    ],
    minLines: MIN_LINES,
    minTokens: MIN_TOKENS,
    mode: 'mild',
    silent: true,
    reporters: [],
    gitignore: true,
  });
  return clones
    .map((clone) => {
      const place = (d: typeof clone.duplicationA): string =>
        `${relative(REPO, d.sourceId)}:${d.start.line}-${d.end.line}`;
      const [a, b] = [place(clone.duplicationA), place(clone.duplicationB)].sort();
      return { a: a!, b: b!, lines: clone.duplicationA.end.line - clone.duplicationA.start.line + 1 };
    })
    .sort((x, y) => x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
}

const fileOf = (place: string): string => place.slice(0, place.lastIndexOf(':'));

/** The clones counted per pair of files. */
export function countClones(clones: readonly Clone[]): CloneCounts {
  const counts: CloneCounts = {};
  for (const { a, b } of clones) {
    const key = [fileOf(a), fileOf(b)].sort().join(' ~ ');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([x], [y]) => x.localeCompare(y)));
}

/** What differs from the baseline: pairs with more clones (new code repeated), pairs with fewer. */
export function compareWithBaseline(
  clones: readonly Clone[],
  baseline: CloneCounts,
): { added: Clone[]; stale: string[] } {
  const counts = countClones(clones);
  const added = clones.filter((clone) => {
    const key = [fileOf(clone.a), fileOf(clone.b)].sort().join(' ~ ');
    return (counts[key] ?? 0) > (baseline[key] ?? 0);
  });
  const stale = Object.keys(baseline).filter((key) => (counts[key] ?? 0) < baseline[key]!);
  return { added, stale };
}

export function readBaseline(): CloneCounts {
  return JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as CloneCounts;
}

export function writeBaseline(counts: CloneCounts): void {
  writeFileSync(BASELINE_FILE, `${JSON.stringify(counts, null, 2)}\n`);
}
