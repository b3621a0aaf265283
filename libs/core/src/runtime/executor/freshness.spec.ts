/**
 * Freshness (`maxAgeMs`): on resume, a journaled activity result older than its activity's
 * maxAgeMs is recomputed in its place; later steps keep their journaled results. Time comes from
 * a fake clock through the executor's host.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/errors.js';
import type { JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';

const HOUR = 3_600_000;

function hostAt(now: { t: number }): TestHost {
  const host = testHost();
  host.clock = () => now.t;
  return host;
}

const kinds = (journal: JournalEntry[]): string[] =>
  journal.map((e) => ('seq' in e ? `${e.type}#${e.seq}` : e.type));

describe('activity freshness (maxAgeMs)', () => {
  const pulls: Array<{ key: string; at: number }> = [];
  const now = { t: 1_000_000 };
  let score = 700;
  const pullCredit = defineActivity({
    name: 'pull_credit',
    maxAgeMs: 24 * HOUR,
    run: (_: null, io) => (pulls.push({ key: io.idempotencyKey, at: now.t }), score),
  });
  const decide = defineActivity({
    name: 'decide',
    run: (credit: number) => (credit >= 650 ? 'approve' : 'deny'),
  });
  /** Pull credit, wait days for a human, then decide on the credit score. */
  const loan = defineWorkflow({
    name: 'loan',
    version: 1,
    run: async (ctx) => {
      const credit = await ctx.run(pullCredit, null);
      const reviewer = await ctx.waitForSignal<string>('review');
      return { credit, reviewer, decision: await ctx.run(decide, credit) };
    },
  });

  async function suspendedAfterPull(): Promise<JournalEntry[]> {
    pulls.length = 0;
    score = 700;
    now.t = 1_000_000;
    const first = await execute(loan, null, [], hostAt(now));
    expect(first.outcome).toEqual({ kind: 'suspended' });
    expect(pulls).toHaveLength(1);
    return first.journal;
  }

  function reviewedHost(): TestHost {
    const host = hostAt(now);
    host.inbox.push({ signalId: 's1', name: 'review', payload: 'ana', receivedAt: now.t });
    return host;
  }

  it('keeps a journaled result younger than maxAgeMs', async () => {
    const journal = await suspendedAfterPull();
    score = 500;
    now.t += 23 * HOUR;
    const host = reviewedHost();
    const { outcome } = await execute(loan, null, journal, host);
    expect(outcome).toEqual({
      kind: 'completed',
      result: { credit: 700, reviewer: 'ana', decision: 'approve' },
    });
    expect(pulls).toHaveLength(1);
    expect(host.journal.some((e) => 'refreshed' in e)).toBe(false);
  });

  it('recomputes a stale result in its place, with the same idempotency key, and journals it as refreshed', async () => {
    const journal = await suspendedAfterPull();
    score = 500;
    now.t += 3 * 24 * HOUR;
    const host = reviewedHost();
    const { outcome, journal: after } = await execute(loan, null, journal, host);
    expect(outcome).toEqual({
      kind: 'completed',
      result: { credit: 500, reviewer: 'ana', decision: 'deny' },
    });
    expect(pulls.map((p) => p.key)).toEqual(['run-1:0', 'run-1:0']);
    expect(kinds(host.journal)).toEqual(['ActivityCompleted#0', 'SignalReceived#1', 'ActivityCompleted#2']);
    expect(host.journal[0]).toMatchObject({ result: 500, refreshed: true, at: now.t });

    // The later entry wins on every later replay, and is itself fresh now: nothing runs.
    score = 900;
    const replay = await execute(loan, null, after, hostAt(now));
    expect(replay.outcome).toEqual(outcome);
    expect(pulls).toHaveLength(2);
    expect(replay.host.journal).toEqual([]);

    // Once the refreshed result ages too, it is refreshed again; later steps keep their results.
    now.t += 2 * 24 * HOUR;
    const again = await execute(loan, null, after, hostAt(now));
    expect(again.outcome).toEqual({
      kind: 'completed',
      result: { credit: 900, reviewer: 'ana', decision: 'deny' },
    });
    expect(kinds(again.host.journal)).toEqual(['ActivityCompleted#0']);
  });

  it('journals the failure of a refresh, which the workflow sees like any activity failure', async () => {
    let fail = false;
    const quote = defineActivity({
      name: 'quote',
      maxAgeMs: 1_000,
      retry: { maxAttempts: 1 },
      run: () => {
        if (fail) throw new Error('pricing service down');
        return 42;
      },
    });
    const wf = defineWorkflow({
      name: 'quote',
      version: 1,
      run: async (ctx) => {
        const price = await ctx.run(quote, null).catch((err: Error) => `failed: ${err.name}`);
        await ctx.sleep('1h');
        return price;
      },
    });
    now.t = 0;
    const first = await execute(wf, null, [], hostAt(now));
    expect(first.outcome).toEqual({ kind: 'suspended' });
    fail = true;
    now.t = 2 * HOUR;
    const resumed = await execute(wf, null, first.journal, hostAt(now));
    expect(resumed.outcome).toEqual({ kind: 'completed', result: 'failed: ActivityFailedError' });
    expect(resumed.host.journal[0]).toMatchObject({ type: 'ActivityFailed', seq: 0, refreshed: true });
    const replay = await execute(wf, null, resumed.journal, hostAt(now));
    expect(replay.outcome).toEqual(resumed.outcome);
    expect(replay.host.journal).toEqual([]);
  });

  it('refuses maxAgeMs on a non-idempotent activity, naming it', () => {
    expect(() =>
      defineActivity({ name: 'charge_card', idempotent: false, maxAgeMs: 1_000, run: () => 1 }),
    ).toThrow(ConfigError);
    expect(() =>
      defineActivity({ name: 'charge_card', maxAgeMs: 1_000, run: () => 1, reconcile: () => undefined }),
    ).toThrow(/activity charge_card: maxAgeMs is set but the activity is not idempotent/);
    expect(() => defineActivity({ name: 'q', maxAgeMs: 0, run: () => 1 })).toThrow(
      /maxAgeMs must be a positive/,
    );
  });

  it('refuses maxAgeMs passed to ctx.run for a non-idempotent activity', async () => {
    const charge = defineActivity({ name: 'charge_card', idempotent: false, run: () => 1 });
    const wf = defineWorkflow({
      name: 'w',
      version: 1,
      run: async (ctx) => ctx.run(charge, null, { maxAgeMs: 1_000 }),
    });
    const { outcome, journal } = await execute(wf, null);
    expect(outcome).toMatchObject({ kind: 'failed', error: { name: 'ConfigError' } });
    expect(journal).toEqual([]);
  });
});
