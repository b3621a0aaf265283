/**
 * ctx.historyInfo() (author/history-info.ts): journaled like ctx.now(), so a replay, whole or from
 * a resume mid-loop, returns the numbers the first execution saw, whatever the replaying host says.
 */
import { describe, expect, it } from 'vitest';
import type { HistoryInfo, JournalEntry } from '../../shared/journal.js';
import { defineActivity, defineWorkflow } from '../../author/workflow.js';
import { execute, testHost, type TestHost } from './test-host.spec-helper.js';

const tick = defineActivity({ name: 'tick', run: (n: number) => n + 1 });

/** Five iterations of one step each, reading historyInfo() after every step. */
const looping = defineWorkflow({
  name: 'looping',
  version: 1,
  run: async (ctx) => {
    const seen: HistoryInfo[] = [];
    let n = 0;
    for (let i = 0; i < 5; i++) {
      n = await ctx.run(tick, n);
      seen.push(ctx.historyInfo());
    }
    return seen;
  },
});

/** A host that counts its history as a worker does: every entry it holds, and their JSON bytes. */
function countingHost(prior: JournalEntry[], scale = 1): TestHost {
  const host = testHost();
  host.historyInfo = () => {
    const all = [...prior, ...host.journal];
    const bytes = Buffer.byteLength(JSON.stringify(all)) * scale;
    return { length: all.length * scale, bytes, suggested: all.length * scale >= 6 };
  };
  return host;
}

describe('ctx.historyInfo()', () => {
  it('records the history as the host counts it, growing with every step', async () => {
    const first = await execute(looping, null, [], countingHost([]));
    expect(first.outcome.kind).toBe('completed');
    const seen = (first.outcome as { result: HistoryInfo[] }).result;
    expect(seen).toHaveLength(5);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.length).toBeGreaterThan(seen[i - 1]!.length);
      expect(seen[i]!.bytes).toBeGreaterThan(seen[i - 1]!.bytes);
    }
    expect(seen.map((s) => s.suggested)).toContain(true);
    expect(seen[0]!.suggested).toBe(false);
    const recorded = first.journal.filter((e) => e.type === 'ValueRecorded');
    expect(recorded.map((e) => e.value)).toEqual(seen);
  });

  it('returns the same numbers on a replay whose host counts something else', async () => {
    const first = await execute(looping, null, [], countingHost([]));
    // Another worker, other limits, a history ten times the size: the journal's values win.
    const replay = await execute(looping, null, first.journal, countingHost(first.journal, 10));
    expect(replay.outcome).toEqual(first.outcome);
    expect(replay.host.journal).toEqual([]);
  });

  it('returns the same numbers when resumed mid-loop and run on to the end', async () => {
    const first = await execute(looping, null, [], countingHost([]));
    const seen = (first.outcome as { result: HistoryInfo[] }).result;
    // Cut the journal after the third recorded value: a crash there, then a resume.
    let recorded = 0;
    const cut = first.journal.findIndex((e) => e.type === 'ValueRecorded' && ++recorded === 3);
    const prefix = first.journal.slice(0, cut + 1);
    const resumed = await execute(looping, null, prefix, countingHost(prefix));
    expect(resumed.outcome).toEqual({ kind: 'completed', result: seen });
  });

  it('gives a copy: changing it does not change what replays see', async () => {
    const wf = defineWorkflow({
      name: 'mutating',
      version: 1,
      run: async (ctx) => {
        const info = ctx.historyInfo();
        info.length = -1;
        await ctx.run(tick, 0);
        return ctx.historyInfo().length >= 0;
      },
    });
    const first = await execute(wf, null, [], countingHost([]));
    expect(first.outcome).toEqual({ kind: 'completed', result: true });
    const replay = await execute(wf, null, first.journal, countingHost(first.journal));
    expect(replay.outcome).toEqual(first.outcome);
  });

  it('on a host that keeps no count, counts the entries it knows and no bytes', async () => {
    const wf = defineWorkflow({
      name: 'uncounted',
      version: 1,
      run: async (ctx) => {
        await ctx.run(tick, 0);
        return ctx.historyInfo();
      },
    });
    const first = await execute(wf, null);
    const info = (first.outcome as { result: HistoryInfo }).result;
    expect(info).toMatchObject({ bytes: 0, suggested: false });
    expect(info.length).toBeGreaterThanOrEqual(1);
  });
});
