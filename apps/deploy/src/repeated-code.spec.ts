/**
 * No change adds repeated code: the production sources' clones match the committed baseline
 * (repeated-code.ts says what counts and why the baseline is per pair of files).
 */
import { describe, expect, it } from 'vitest';
import { compareWithBaseline, countClones, findClones, readBaseline, type Clone } from './repeated-code.js';

const clone = (a: string, b: string): Clone => ({ a, b, lines: 10 });

describe('repeated code', () => {
  it('tells a new clone and a baseline that is too high apart from a tree that matches', () => {
    const tree = [
      clone('libs/a/src/x.ts:1-10', 'libs/b/src/y.ts:5-14'),
      clone('libs/a/src/x.ts:20-29', 'libs/b/src/y.ts:40-49'),
    ];
    expect(countClones(tree)).toEqual({ 'libs/a/src/x.ts ~ libs/b/src/y.ts': 2 });
    expect(compareWithBaseline(tree, { 'libs/a/src/x.ts ~ libs/b/src/y.ts': 2 })).toEqual({
      added: [],
      stale: [],
    });
    // A third clone between the same files is new, whichever of them moved.
    expect(compareWithBaseline(tree, { 'libs/a/src/x.ts ~ libs/b/src/y.ts': 1 }).added).toHaveLength(2);
    expect(compareWithBaseline(tree, {}).added).toEqual(tree);
    // A pair that lost its clones leaves the baseline too high: it must be lowered.
    expect(compareWithBaseline([], { 'libs/a/src/x.ts ~ libs/b/src/y.ts': 2 }).stale).toEqual([
      'libs/a/src/x.ts ~ libs/b/src/y.ts',
    ]);
  });

  it('the sources hold no clone the baseline does not', { timeout: 120_000 }, async () => {
    const { added, stale } = compareWithBaseline(await findClones(), readBaseline());
    expect(
      added.map(({ a, b, lines }) => `${lines} lines repeated: ${a} ~ ${b}`),
      'code repeated by this change: make one place serve both (a shared helper), or, when the two ' +
        'must stay apart, say why in the commit and run `npm run repeated:update`',
    ).toEqual([]);
    expect(stale, 'repeated code was removed: lower the baseline with `npm run repeated:update`').toEqual([]);
  });
});
