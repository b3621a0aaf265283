/**
 * Search attributes through the client: the text form of a filter (parseAttributeFilter), runs
 * listed and counted by attribute, bulk actions on an attribute filter, and describe showing them.
 */
import { describe, expect, it } from 'vitest';
import type { AttributeChanges, RunOutcome, Store } from '@baton/core/adapter';
import { memoryStore, memoryTransport } from '@baton/core/memory';
import { Client, parseAttributeFilter } from './index.js';

const DONE: RunOutcome = { status: 'completed', result: 1 };

/** A run of `workflow` with `changes` set under its lease; finished unless `running`. */
async function runWith(store: Store, n: number, changes: AttributeChanges, running = false): Promise<string> {
  const runId = `attr-run-${n}`;
  await store.runs.create({
    runId,
    workflow: n % 2 === 0 ? 'even' : 'odd',
    version: 1,
    input: n,
    idempotencyKey: null,
  });
  const lease = await store.leases.acquire(runId, 'worker-attr', 60_000);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  await store.attributes.set(runId, lease.epoch, changes);
  if (!running) await store.runs.finish(runId, lease.epoch, DONE);
  return runId;
}

describe('parseAttributeFilter', () => {
  it('reads equality (a keyword unless typed) and ranges (a number, else a time)', () => {
    expect(
      parseAttributeFilter([
        'customerId=42',
        'total:number=42.5',
        'vip:boolean=true',
        'at:time=2026-11-25T10:00:00Z',
        'score>=10',
        'score<20',
        'placedAt>2026-11-01',
        'code=a=b',
      ]),
    ).toEqual({
      customerId: '42',
      total: 42.5,
      vip: true,
      at: { type: 'time', eq: Date.parse('2026-11-25T10:00:00Z') },
      score: { type: 'number', gte: 10, lt: 20 },
      placedAt: { type: 'time', gt: Date.parse('2026-11-01') },
      code: 'a=b',
    });
    expect(parseAttributeFilter(['n:time<=1700000000000'])).toEqual({
      n: { type: 'time', lte: 1_700_000_000_000 },
    });
  });

  it('refuses what does not read, naming the expression and the forms', () => {
    const refused = (...expressions: string[]): string => {
      try {
        parseAttributeFilter(expressions);
      } catch (err) {
        expect(err).toMatchObject({ name: 'ConfigError', code: 'BATON_CONFIG' });
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused('customerId')).toMatch(/attribute filter 'customerId' does not read; write name=value/);
    expect(refused('a b=1')).toMatch(/does not read/);
    expect(refused('n:integer=1')).toMatch(
      /names type 'integer', which is none of keyword, number, boolean, time/,
    );
    expect(refused('n:number=ten')).toMatch(/has 'ten', which is not a number/);
    expect(refused('v:boolean=yes')).toMatch(/a boolean is true or false/);
    expect(refused('t>=soon')).toMatch(/has 'soon', which is not a time/);
    expect(refused('tier:keyword>=a')).toMatch(/is a range over a keyword/);
    expect(refused('c=')).toMatch(/has no value/);
    expect(refused('c=1', 'c=2')).toMatch(/'c=2' is a second condition on c/);
    expect(refused('n>1', 'n>=2')).toMatch(/second lower bound on n/);
    expect(refused('n>1', 'n:time<5')).toMatch(
      /tests n as a time, and another expression tests it as a number/,
    );
  });
});

describe('client.runs and client.bulk by attribute', () => {
  it('lists runs by attribute and counts them per value from the kept counts', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    for (let n = 0; n < 6; n++)
      await runWith(store, n, { tier: { type: 'keyword', value: n < 4 ? 'gold' : 'basic' } });
    const running = await runWith(store, 6, { tier: { type: 'keyword', value: 'gold' } }, true);
    const gold = await client.runs.list({ attributes: parseAttributeFilter(['tier=gold']), limit: 2 });
    expect(gold.runs.map((r) => r.runId)).toEqual([running, 'attr-run-3']);
    expect(gold.runs[0]?.attributes).toEqual({ tier: { type: 'keyword', value: 'gold' } });
    const counts = await client.runs.count({ attributes: { tier: 'gold' } });
    expect(counts).toMatchObject({
      total: 5,
      byStatus: { completed: 4, running: 1 },
      byWorkflow: { even: { completed: 2, running: 1 }, odd: { completed: 2 } },
    });
    await expect(client.runs.count({ attributes: { tier: 'gold', other: 'x' } })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      message: expect.stringMatching(/count any other filter with client.bulk.count/),
    });
    await expect(client.runs.count({ attributes: { n: { gte: 1 } } })).rejects.toMatchObject({
      code: 'BATON_CONFIG',
    });
    // The whole store's counts, as before.
    expect((await client.runs.count()).total).toBe(7);
  });

  it('counts and acts in bulk on an attribute filter, from kept counts or page by page alike', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    for (let n = 0; n < 1_300; n++)
      await runWith(store, n, {
        customerId: { type: 'keyword', value: n % 5 === 0 ? '7' : '42' },
        n: { type: 'number', value: n },
      });
    // 1,040 runs of customer 42: more than a page, so the kept counts answer.
    expect(await client.bulk.count({ attributes: { customerId: '42' } })).toBe(1_040);
    expect(await client.bulk.count({ attributes: { customerId: '42' }, workflow: 'even' }, 'delete')).toBe(
      520,
    );
    expect(await client.bulk.count({ attributes: { customerId: '7' } })).toBe(260);
    // A range is counted page by page.
    expect(await client.bulk.count({ attributes: { n: { gte: 1_295 } } })).toBe(5);
    expect(await client.bulk.count({ attributes: { customerId: '42', n: { lt: 10 } } })).toBe(8);
    const summary = await client.bulk.run('delete', { attributes: { customerId: '42', n: { lt: 100 } } });
    expect(summary).toMatchObject({ matched: 80, refused: [], failed: [] });
    expect(summary.succeeded).toHaveLength(80);
    expect(await client.bulk.count({ attributes: { customerId: '42' } })).toBe(960);
  });

  it('describes a run with its attributes', async () => {
    const store = memoryStore();
    const client = new Client({ transport: memoryTransport(), store });
    const runId = await runWith(store, 1, {
      customerId: { type: 'keyword', value: '42' },
      placedAt: { type: 'time', value: 1_700_000_000_000 },
    });
    expect((await client.describe(runId)).attributes).toEqual({
      customerId: { type: 'keyword', value: '42' },
      placedAt: { type: 'time', value: 1_700_000_000_000 },
    });
  });
});
