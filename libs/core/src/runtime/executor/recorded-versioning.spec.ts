/**
 * Replays a recorded journal that holds a PatchMarker and a refreshed (maxAgeMs) completion
 * (fixtures/priced-patched.journal.json): the run took the patch's new branch, suspended for two
 * days, and on resume its stale price was pulled again. If a change to the executor or the codec
 * made such journals replay differently, in-flight runs would break on deploy.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeEntries, encodeEntries } from '../codec.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';

interface Recording {
  runId: string;
  recordedAt: number;
  entries: JournalEntry[];
}

const recording = JSON.parse(
  readFileSync(new URL('./fixtures/priced-patched.journal.json', import.meta.url), 'utf8'),
) as Recording;
const history = recording.entries.filter((e) => e.type !== 'RunCompleted');
const completed = recording.entries.find((e) => e.type === 'RunCompleted') as { result: unknown };

const DAY = 86_400_000;
const executions: string[] = [];
const price = defineActivity({
  name: 'price',
  maxAgeMs: DAY,
  run: () => (executions.push('price'), 120),
});
const tax = defineActivity({ name: 'tax', run: (p: number) => (executions.push('tax'), p / 5) });

/** The code that recorded the fixture. */
const priced = defineWorkflow({
  name: 'fixture_priced',
  version: 1,
  run: async (ctx) => {
    const p = await ctx.run(price, null);
    const t = ctx.patched('add-tax') ? await ctx.run(tax, p) : 0;
    await ctx.sleep('2d');
    return { price: p, tax: t };
  },
});

function hostAt(now: number): TestHost {
  const host = testHost(recording.runId, 3);
  host.clock = () => now;
  return host;
}

describe('a recorded journal with a patch marker and a refreshed result', () => {
  it('replays to the recorded result, the refreshed price winning, without running or journaling anything', async () => {
    executions.length = 0;
    const host = hostAt(recording.recordedAt + 3_600_000);
    const { outcome } = await execute(priced, null, history, host);
    expect(outcome).toEqual({ kind: 'completed', result: completed.result });
    expect(executions).toEqual([]);
    expect(host.journal).toEqual([]);
  });

  it('refreshes the price again once the refreshed result is itself stale', async () => {
    executions.length = 0;
    const host = hostAt(recording.recordedAt + 2 * DAY);
    const { outcome } = await execute(priced, null, history, host);
    expect(outcome).toEqual({ kind: 'completed', result: { price: 120, tax: 20 } });
    expect(executions).toEqual(['price']);
    expect(host.journal).toMatchObject([{ type: 'ActivityCompleted', seq: 0, result: 120, refreshed: true }]);
  });

  it('survives the codec unchanged', () => {
    expect(decodeEntries(encodeEntries(recording.entries), recording.runId)).toEqual(recording.entries);
  });

  it('refuses code that dropped the patch while runs that took it are in flight, naming the step', async () => {
    const withoutPatch = defineWorkflow({
      name: 'fixture_priced',
      version: 1,
      run: async (ctx) => {
        const p = await ctx.run(price, null);
        await ctx.sleep('2d');
        return { price: p, tax: 0 };
      },
    });
    const { outcome } = await execute(withoutPatch, null, history, hostAt(recording.recordedAt));
    expect(outcome).toMatchObject({ kind: 'failed', nonDeterminism: true });
    if (outcome.kind === 'failed') {
      expect(outcome.error.message).toMatch(
        /step #1 replayed as sleep but the journal recorded activity:tax/,
      );
    }
  });
});
