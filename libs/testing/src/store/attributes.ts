/**
 * Store conformance, search attributes section (`store.attributes`, and the run queries'
 * `attributes` filter; docs/search-attributes.md): set under the fence and merged, read back on
 * the record, listed by equality and range in keyset pages in both orders, counted per keyword
 * and boolean value as runs change status and values, and gone with a deleted run.
 */
import { describe, expect, it } from 'vitest';
import type { AttributeChanges, RunOutcome, RunQuery, RunStatus, Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { FENCED, acquireOk } from './helpers.js';
import { allPages } from './queries.js';

const COMPLETED: RunOutcome = { status: 'completed', result: 1 };
const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'boom' } };
const BAD_QUERY = { name: 'ConfigError', code: 'BATON_CONFIG' } as const;

interface Made {
  runId: string;
  epoch: number;
  createdAt: number;
}

/** A run of `workflow`, claimed (running), with `changes` set under its lease. */
async function runWith(store: Store, workflow: string, changes: AttributeChanges): Promise<Made> {
  const runId = uniqueId('attr');
  const { run } = await store.runs.create({ runId, workflow, version: 1, input: null, idempotencyKey: null });
  const epoch = await acquireOk(store, runId, 'worker-attr');
  await store.attributes.set(runId, epoch, changes);
  return { runId, epoch, createdAt: run.createdAt };
}

const kw = (value: string) => ({ type: 'keyword', value }) as const;
const num = (value: number) => ({ type: 'number', value }) as const;
const bool = (value: boolean) => ({ type: 'boolean', value }) as const;
const time = (value: number) => ({ type: 'time', value }) as const;

const ids = (runs: readonly { runId: string }[]): string[] => runs.map((r) => r.runId);

/** Newest first: createdAt descending, then run id descending. */
function newestFirst(runs: readonly Made[]): string[] {
  return [...runs]
    .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0))
    .map((r) => r.runId);
}

/** Registers the search attributes tests; `store()` is the test's store. */
export function describeAttributeConformance(store: () => Store): void {
  describe('search attributes', () => {
    it('sets attributes under the fence only, merged, null removing, and keeps them on the record', async () => {
      const s = store();
      const made = await runWith(s, 'attr-record', { customerId: kw('42'), total: num(12.5) });
      await s.attributes.set(made.runId, made.epoch, {
        total: null,
        vip: bool(true),
        at: time(1_700_000_000_000),
      });
      const expected = { customerId: kw('42'), vip: bool(true), at: time(1_700_000_000_000) };
      expect((await s.runs.get(made.runId))?.attributes).toEqual(expected);
      const [listed] = (await s.runs.list({ workflow: 'attr-record' })).runs;
      expect(listed?.attributes).toEqual(expected);
      // Repeating a call changes nothing more.
      await s.attributes.set(made.runId, made.epoch, { total: null, vip: bool(true) });
      expect((await s.runs.get(made.runId))?.attributes).toEqual(expected);

      // A stale epoch, and a finished run, are fenced: nothing changes.
      const next = await acquireOk(s, made.runId, 'worker-b').catch(() => undefined);
      const stale = made.epoch;
      if (next !== undefined) {
        await expect(s.attributes.set(made.runId, stale, { customerId: kw('zombie') })).rejects.toMatchObject(
          FENCED,
        );
        await s.runs.finish(made.runId, next, COMPLETED);
        await expect(s.attributes.set(made.runId, next, { customerId: kw('late') })).rejects.toMatchObject(
          FENCED,
        );
      }
      expect((await s.runs.get(made.runId))?.attributes).toEqual(expected);
      // A run with no attributes has none on its record.
      const { runId } = await runWith(s, 'attr-record', {});
      expect((await s.runs.get(runId))?.attributes).toBeUndefined();
    });

    it('lists runs by keyword, boolean, number and time equality, each value under its own type', async () => {
      const s = store();
      const wf = uniqueId('attr-eq');
      const a = await runWith(s, wf, {
        customerId: kw('42'),
        vip: bool(true),
        total: num(100),
        day: time(5_000),
      });
      const b = await runWith(s, wf, { customerId: kw('43'), vip: bool(false), total: num(100.25) });
      // The number 42 and the keyword '42' are different values.
      const c = await runWith(s, wf, { customerId: num(42), total: num(-3) });
      const list = async (attributes: RunQuery['attributes']): Promise<string[]> =>
        ids((await s.runs.list({ workflow: wf, attributes })).runs);
      expect(await list({ customerId: '42' })).toEqual([a.runId]);
      expect(await list({ customerId: 42 })).toEqual([c.runId]);
      expect(await list({ vip: true })).toEqual([a.runId]);
      expect(await list({ vip: false })).toEqual([b.runId]);
      expect(await list({ total: 100.25 })).toEqual([b.runId]);
      expect(await list({ day: new Date(5_000) })).toEqual([a.runId]);
      expect(await list({ day: { type: 'time', eq: 5_000 } })).toEqual([a.runId]);
      expect(await list({ customerId: '42', vip: true })).toEqual([a.runId]);
      expect(await list({ customerId: '42', vip: false })).toEqual([]);
      expect(await list({ customerId: 'nobody' })).toEqual([]);
      expect(await list({ missing: 'x' })).toEqual([]);
      // Without the workflow, across the store, newest first.
      expect(ids((await s.runs.list({ attributes: { total: 100 } })).runs)).toEqual([a.runId]);
    });

    it('lists runs by number and time ranges, bounds inclusive or not', async () => {
      const s = store();
      const wf = uniqueId('attr-range');
      const made: Made[] = [];
      for (const n of [1, 5, 10, 50, 100])
        made.push(await runWith(s, wf, { total: num(n), at: time(n * 1000) }));
      const [r1, r5, r10, r50, r100] = made.map((m) => m.runId);
      // Compared as sets in the listing's order: runs created in one ms are ordered by run id.
      const order = newestFirst(made);
      const list = async (attributes: RunQuery['attributes']): Promise<string[]> => {
        const listed = ids((await s.runs.list({ workflow: wf, attributes })).runs);
        expect(listed).toEqual(order.filter((id) => listed.includes(id)));
        return [...listed].sort();
      };
      const sorted = (...runIds: (string | undefined)[]): string[] => (runIds as string[]).sort();
      expect(await list({ total: { gte: 5, lt: 100 } })).toEqual(sorted(r5, r10, r50));
      expect(await list({ total: { gt: 5, lte: 100 } })).toEqual(sorted(r10, r50, r100));
      expect(await list({ total: { lt: 1 } })).toEqual([]);
      expect(await list({ total: { gte: 1 } })).toEqual(sorted(r1, r5, r10, r50, r100));
      expect(await list({ at: { gte: new Date(10_000) } })).toEqual(sorted(r10, r50, r100));
      expect(await list({ at: { type: 'time', lt: 10_000 } })).toEqual(sorted(r1, r5));
      expect(await list({ at: { gte: new Date(5_000) }, total: { lte: 10 } })).toEqual(sorted(r5, r10));
      // A number range does not match a time, nor a time range a number.
      expect(await list({ at: { gte: 0 } })).toEqual([]);
      expect(await list({ total: { gte: new Date(0) } })).toEqual([]);
    });

    it('pages an attribute filter by its cursor in both orders, with the other filters', async () => {
      const s = store();
      const wf = uniqueId('attr-pages');
      const made: Made[] = [];
      for (let i = 0; i < 7; i++) {
        made.push(await runWith(s, wf, { tenant: kw('acme'), n: num(i) }));
        // Distinct createdAt values on any store clock, ties included by chance too.
        if (i % 3 === 0) await sleep(2);
      }
      await runWith(s, wf, { tenant: kw('other') });
      const finishedOnes = new Set<string>();
      for (const m of made.slice(0, 3)) {
        await s.runs.finish(m.runId, m.epoch, COMPLETED);
        finishedOnes.add(m.runId);
      }
      const expected = newestFirst(made);
      const newest = await allPages(s, { workflow: wf, attributes: { tenant: 'acme' }, limit: 2 });
      expect(newest.flat().map((r) => r.runId)).toEqual(expected);
      expect(newest.map((p) => p.length)).toEqual([2, 2, 2, 1]);
      const oldest = await allPages(s, { attributes: { tenant: 'acme' }, order: 'oldest', limit: 3 });
      expect(oldest.flat().map((r) => r.runId)).toEqual([...expected].reverse());
      const completed = await allPages(s, {
        workflow: wf,
        status: 'completed',
        attributes: { tenant: 'acme' },
        limit: 1,
      });
      expect(completed.flat().map((r) => r.runId)).toEqual(expected.filter((id) => finishedOnes.has(id)));
      const ranged = await allPages(s, { attributes: { tenant: 'acme', n: { gte: 2 } }, limit: 2 });
      expect(ranged.flat().map((r) => r.runId)).toEqual(newestFirst(made.slice(2)));
      // A cursor belongs to its filter.
      const first = await s.runs.list({ attributes: { tenant: 'acme' }, limit: 2 });
      await expect(
        s.runs.list({ attributes: { tenant: 'other' }, limit: 2, cursor: first.cursor! }),
      ).rejects.toMatchObject({ ...BAD_QUERY, message: expect.stringMatching(/another filter or order/) });
      // The same filter in another form is the same query: its cursor carries on.
      const same = await s.runs.list({
        attributes: { tenant: { eq: 'acme' } },
        limit: 2,
        cursor: first.cursor!,
      });
      expect(ids(same.runs)).toEqual(expected.slice(2, 4));
    });

    it('follows a changed value: the old value no longer lists the run, the new one does', async () => {
      const s = store();
      const wf = uniqueId('attr-change');
      const made = await runWith(s, wf, { stage: kw('draft'), score: num(1) });
      await s.attributes.set(made.runId, made.epoch, { stage: kw('sent'), score: num(9) });
      const list = async (attributes: RunQuery['attributes']): Promise<string[]> =>
        ids((await s.runs.list({ workflow: wf, attributes })).runs);
      expect(await list({ stage: 'draft' })).toEqual([]);
      expect(await list({ stage: 'sent' })).toEqual([made.runId]);
      expect(await list({ score: { lt: 5 } })).toEqual([]);
      expect(await list({ score: 9 })).toEqual([made.runId]);
      await s.attributes.set(made.runId, made.epoch, { stage: null, score: kw('nine') });
      expect(await list({ stage: 'sent' })).toEqual([]);
      expect(await list({ score: 9 })).toEqual([]);
      expect(await list({ score: 'nine' })).toEqual([made.runId]);
    });

    it('counts runs per keyword and boolean value, by status and workflow, as runs and values change', async () => {
      const s = store();
      const customer = uniqueId('cust');
      const one = await runWith(s, 'attr-count-a', { customerId: kw(customer), vip: bool(true) });
      const two = await runWith(s, 'attr-count-a', { customerId: kw(customer) });
      const three = await runWith(s, 'attr-count-b', { customerId: kw(customer) });
      await s.runs.finish(one.runId, one.epoch, COMPLETED);
      await s.runs.finish(two.runId, two.epoch, FAILED);
      const counted = await s.attributes.count('customerId', kw(customer));
      const zero = { pending: 0, running: 0, suspended: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 };
      expect(counted).toEqual({
        total: 3,
        byStatus: { ...zero, completed: 1, failed: 1, running: 1 },
        byWorkflow: { 'attr-count-a': { completed: 1, failed: 1 }, 'attr-count-b': { running: 1 } },
      });
      // A suspended run moves its count; a changed value moves it to the new value.
      expect(
        await s.leases.suspend({
          runId: three.runId,
          epoch: three.epoch,
          wakeAt: null,
          signals: ['x'],
          consumedSignalIds: [],
        }),
      ).toEqual({ ok: true });
      const resumed = await acquireOk(s, three.runId, 'worker-attr');
      await s.attributes.set(three.runId, resumed, { customerId: kw(`${customer}-moved`) });
      expect((await s.attributes.count('customerId', kw(customer))).byWorkflow).toEqual({
        'attr-count-a': { completed: 1, failed: 1 },
      });
      const moved = await s.attributes.count('customerId', kw(`${customer}-moved`));
      expect(moved).toMatchObject({
        total: 1,
        byStatus: { running: 1 },
        byWorkflow: { 'attr-count-b': { running: 1 } },
      });
      expect((await s.attributes.count('vip', bool(true))).byStatus).toMatchObject({ completed: 1 });
      expect(await s.attributes.count('customerId', kw('nobody'))).toEqual({
        total: 0,
        byStatus: zero,
        byWorkflow: {},
      });
      // Counts per value only for keywords and booleans.
      await expect(s.attributes.count('total', num(1) as never)).rejects.toMatchObject({
        ...BAD_QUERY,
        message: expect.stringMatching(/runs are counted per keyword and boolean value/),
      });
    });

    it('forgets a deleted run: no listing, no count, and its value free for other runs', async () => {
      const s = store();
      const tag = uniqueId('gone');
      const made = await runWith(s, 'attr-delete', { tag: kw(tag), n: num(7) });
      const kept = await runWith(s, 'attr-delete', { tag: kw(tag) });
      await s.runs.finish(made.runId, made.epoch, COMPLETED);
      expect(await s.retention.delete(made.runId)).toBe(true);
      expect(ids((await s.runs.list({ attributes: { tag } })).runs)).toEqual([kept.runId]);
      expect(ids((await s.runs.list({ attributes: { n: 7 } })).runs)).toEqual([]);
      expect(await s.attributes.count('tag', kw(tag))).toMatchObject({
        total: 1,
        byStatus: { running: 1, completed: 0 },
      });
    });

    it('refuses an invalid attribute filter or change with ConfigError naming it, before the store is asked', async () => {
      const s = store();
      const refused = async (attributes: unknown, pattern: RegExp): Promise<void> => {
        await expect(s.runs.list({ attributes: attributes as RunQuery['attributes'] })).rejects.toMatchObject(
          {
            ...BAD_QUERY,
            message: expect.stringMatching(pattern),
          },
        );
      };
      await refused({ 'bad name': 'x' }, /attributes\.bad name is not a valid attribute name/);
      await refused({ tier: { gte: 'a' } }, /attributes\.tier is a range over a keyword/);
      await refused({ n: { eq: 1, gt: 0 } }, /attributes\.n has eq and a range/);
      await refused({ n: { between: [1, 2] } }, /attributes\.n has unknown field\(s\) between/);
      await refused({ n: Number.NaN }, /attributes\.n value is NaN; a number takes a finite number/);
      await refused({ s: '' }, /attributes\.s value is ""; a keyword takes a non-empty string/);
      await refused(
        Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`a${i}`, 1])),
        /names 9 attributes; a query tests at most 8/,
      );
      const made = await runWith(s, 'attr-refuse', {});
      await expect(
        s.attributes.set(made.runId, made.epoch, { total: { type: 'number', value: '12' } as never }),
      ).rejects.toMatchObject({ ...BAD_QUERY, message: expect.stringMatching(/attribute 'total'/) });
      await expect(s.attributes.set(made.runId, made.epoch, { 'a:b': kw('x') })).rejects.toMatchObject(
        BAD_QUERY,
      );
    });

    it('lists and counts the runs of a status a run moved into', async () => {
      const s = store();
      const label = uniqueId('moves');
      const made = await runWith(s, 'attr-moves', { label: kw(label) });
      const statuses = async (): Promise<RunStatus[]> =>
        (await s.runs.list({ attributes: { label } })).runs.map((r) => r.status);
      expect(await statuses()).toEqual(['running']);
      await s.runs.finish(made.runId, made.epoch, COMPLETED);
      expect(await statuses()).toEqual(['completed']);
      expect(ids((await s.runs.list({ status: 'running', attributes: { label } })).runs)).toEqual([]);
      expect((await s.attributes.count('label', kw(label))).byStatus).toMatchObject({
        running: 0,
        completed: 1,
      });
    });
  });
}
