/**
 * Bounded histories on memory adapters (history-bounds.ts, core's author/history-info.ts): past the
 * soft limit the worker warns once per run, however often the run is resumed on it; at the hard
 * limit the run fails with BATON_HISTORY_LIMIT naming ctx.continueAsNew, and nothing but its
 * RunFailed is journaled after; a loop that reads ctx.historyInfo().suggested continues as new by
 * itself and never reaches the hard limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineActivity, defineWorkflow } from '@baton/core';
import { CONTINUED_AS, decodeEntries, HistoryLimitError, isContinuedAsNew } from '@baton/core/runtime';
import { fleet, type Fleet } from './fleet.spec-helper.js';
import type { Logger } from './logger.js';

let current: Fleet | undefined;
afterEach(async () => {
  await current?.shutdown();
  current = undefined;
});

type Line = { level: string; obj: Record<string, unknown>; msg?: string };

function recording(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const step = defineActivity({ name: 'hl_step', run: (n: number) => n + 1 });

/** `steps` steps, a sleep that suspends the run (and resumes it on the same worker), `steps` more. */
const twoHalves = defineWorkflow({
  name: 'hl_two_halves',
  version: 1,
  run: async (ctx, steps: number) => {
    let n = 0;
    for (let i = 0; i < steps; i++) n = await ctx.run(step, n);
    await ctx.sleep(30);
    for (let i = 0; i < steps; i++) n = await ctx.run(step, n);
    return n;
  },
});

async function journalOf(f: Fleet, runId: string) {
  return (await f.journal.journal.read(runId, 0)).flatMap((r) => decodeEntries(r.data, runId));
}

describe('history limits', () => {
  it('warns once per run past the soft limit, across a suspend and resume on the same worker', async () => {
    const lines: Line[] = [];
    const f = (current = fleet({
      workflows: [twoHalves],
      logger: recording(lines),
      historySoftEntries: 8,
    }));
    await f.spawn();
    const run = await f.client.start(twoHalves, 10);
    expect(await run.result({ timeoutMs: 10_000 })).toBe(20);
    // It did resume: a second owner's marker or the sleep's timer firing after a suspension.
    const journal = await journalOf(f, run.runId);
    expect(journal.some((e) => e.type === 'TimerFired')).toBe(true);
    const warnings = lines.filter((l) => l.level === 'warn' && l.msg?.includes('soft limit'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.obj).toMatchObject({ runId: run.runId, workflow: 'hl_two_halves@1' });
    expect(warnings[0]!.msg).toMatch(/ctx\.continueAsNew/);
    expect(warnings[0]!.obj['entries']).toBeGreaterThanOrEqual(8);
  });

  it('does not warn below the soft limit', async () => {
    const lines: Line[] = [];
    const f = (current = fleet({ workflows: [twoHalves], logger: recording(lines) }));
    await f.spawn();
    const run = await f.client.start(twoHalves, 3);
    expect(await run.result({ timeoutMs: 10_000 })).toBe(6);
    expect(lines.filter((l) => l.msg?.includes('soft limit'))).toEqual([]);
  });

  it('fails a run at the hard limit with BATON_HISTORY_LIMIT naming ctx.continueAsNew', async () => {
    let ran = 0;
    const counted = defineActivity({ name: 'hl_counted', run: (n: number) => (ran++, n + 1) });
    const endless = defineWorkflow({
      name: 'hl_endless',
      version: 1,
      run: async (ctx) => {
        let n = 0;
        for (;;) n = await ctx.run(counted, n);
      },
    });
    const f = (current = fleet({ workflows: [endless], historyMaxEntries: 20 }));
    await f.spawn();
    const run = await f.client.start(endless, null);
    const error = (await run.result({ timeoutMs: 10_000 }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/hard limit of 20 \(BATON_HISTORY_MAX_ENTRIES\)/);
    expect(error.message).toMatch(/ctx\.continueAsNew/);
    expect(await f.store.runs.get(run.runId)).toMatchObject({
      status: 'failed',
      error: { name: 'HistoryLimitError', code: 'BATON_HISTORY_LIMIT' },
    });
    const journal = await journalOf(f, run.runId);
    expect(journal.at(-1)?.type).toBe('RunFailed');
    // The entry that reached the limit landed; nothing but the run's end after it.
    expect(journal).toHaveLength(21);
    expect(ran).toBeLessThanOrEqual(20);
    expect(new HistoryLimitError('r', 'bytes', 1, 2, 2).code).toBe('BATON_HISTORY_LIMIT');
  });

  it('lets a loop continue as new by itself when historyInfo() suggests it, never reaching the hard limit', async () => {
    const loop = defineWorkflow({
      name: 'hl_loop',
      version: 1,
      run: async (ctx, input: { n: number; until: number }) => {
        let n = input.n;
        while (n < input.until) {
          n = await ctx.run(step, n);
          if (ctx.historyInfo().suggested) return ctx.continueAsNew({ n, until: input.until });
        }
        return `done at ${n}`;
      },
    });
    // The hard limit fails any run that ignores the soft one: the loop must continue as new.
    const f = (current = fleet({ workflows: [loop], historySoftEntries: 12, historyMaxEntries: 16 }));
    await f.spawn();
    const run = await f.client.start(loop, { n: 0, until: 30 });
    expect(await run.result({ timeoutMs: 15_000 })).toBe('done at 30');
    const ids = [run.runId];
    for (;;) {
      const record = await f.store.runs.get(ids.at(-1)!);
      if (!record || !isContinuedAsNew(record.result)) break;
      ids.push(record.result[CONTINUED_AS].runId);
    }
    expect(ids.length).toBeGreaterThan(2);
    for (const id of ids) {
      expect(await f.store.runs.get(id)).toMatchObject({ status: 'completed' });
      expect((await journalOf(f, id)).length).toBeLessThan(16);
    }
  });
});
