/**
 * Store conformance, RunQueries section: listing runs by filter, in order, in pages whose cursor
 * stays good while runs change, and counting them. Runs of other tests share the store, so every
 * test names its own workflow and filters by it.
 */
import { describe, expect, it } from 'vitest';
import type { ListedRun, RunOutcome, RunQuery, RunStatus, Store } from '@baton/core/adapter';
import { setTimeout as sleep } from 'node:timers/promises';
import { uniqueId } from '../conformance-helpers.js';
import { acquireOk } from './helpers.js';

const COMPLETED: RunOutcome = { status: 'completed', result: { ok: true } };
const FAILED: RunOutcome = { status: 'failed', error: { name: 'Error', message: 'boom' } };

interface Made {
  runId: string;
  status: RunStatus;
  owner: string | null;
  createdAt: number;
}

/** Creates a run of `workflow` and brings it to `status` (running: leased by `owner`). */
async function makeRun(
  store: Store,
  workflow: string,
  status: RunStatus,
  options: { version?: number; key?: string | null; owner?: string } = {},
): Promise<Made> {
  const runId = uniqueId(`q-${status}`);
  const { run } = await store.runs.create({
    runId,
    workflow,
    version: options.version ?? 1,
    input: { status },
    idempotencyKey: options.key ?? null,
  });
  const owner = options.owner ?? 'worker-q';
  if (status === 'pending') return { runId, status, owner: null, createdAt: run.createdAt };
  const epoch = await acquireOk(store, runId, owner);
  if (status === 'running') return { runId, status, owner, createdAt: run.createdAt };
  if (status === 'suspended') {
    expect(
      await store.leases.suspend({ runId, epoch, wakeAt: null, signals: ['go'], consumedSignalIds: [] }),
    ).toEqual({ ok: true });
  } else if (status === 'cancelled') {
    await store.runs.finish(runId, epoch, {
      status: 'cancelled',
      error: { name: 'CancelledError', message: 'x' },
    });
  } else {
    await store.runs.finish(runId, epoch, status === 'completed' ? COMPLETED : FAILED);
  }
  return { runId, status, owner: null, createdAt: run.createdAt };
}

/** Every page of a query, following cursors (bounded, so a cursor that loops fails the test). */
export async function allPages(store: Store, query: RunQuery): Promise<ListedRun[][]> {
  const pages: ListedRun[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await store.runs.list({ ...query, ...(cursor !== undefined && { cursor }) });
    pages.push(page.runs);
    if (page.cursor === undefined) return pages;
    cursor = page.cursor;
  }
  throw new Error('listRuns never returned a last page (100 pages)');
}

const ids = (runs: readonly { runId: string }[]): string[] => runs.map((r) => r.runId);

/** Newest first: by createdAt descending, then run id descending. */
function newestFirst(runs: readonly Made[]): string[] {
  return [...runs]
    .sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0))
    .map((r) => r.runId);
}

/** Registers the run query tests; `store()` is the test's store. */
export function describeRunQueryConformance(store: () => Store): void {
  describe('run queries', () => {
    it('lists the runs of a workflow newest first, as records with their owner and epoch', async () => {
      const workflow = uniqueId('wf-list');
      const made: Made[] = [];
      for (const status of ['pending', 'running', 'completed'] as const) {
        made.push(await makeRun(store(), workflow, status));
        await sleep(2); // distinct createdAt where the store's clock allows
      }
      const page = await store().runs.list({ workflow });
      expect(ids(page.runs)).toEqual(newestFirst(made));
      expect(page.cursor).toBeUndefined();
      const running = page.runs.find((r) => r.status === 'running')!;
      expect(running).toMatchObject({
        workflow,
        version: 1,
        owner: 'worker-q',
        epoch: 1,
        input: { status: 'running' },
      });
      const pending = page.runs.find((r) => r.status === 'pending')!;
      expect(pending).toMatchObject({ owner: null, epoch: 0 });
      const completed = page.runs.find((r) => r.status === 'completed')!;
      expect(completed).toMatchObject({ owner: null, result: { ok: true } });
      // The record is the one runs.get returns.
      const { owner: _o, epoch: _e, ...record } = completed;
      expect(record).toEqual(await store().runs.get(completed.runId));
      const oldest = await store().runs.list({ workflow, order: 'oldest' });
      expect(ids(oldest.runs)).toEqual([...newestFirst(made)].reverse());
    });

    it('filters by one status or several, by version, by run id and idempotency-key prefix, by owner', async () => {
      const workflow = uniqueId('wf-filter');
      const keyPrefix = uniqueId('key');
      const failed = await makeRun(store(), workflow, 'failed', { key: `${keyPrefix}-a` });
      const completed = await makeRun(store(), workflow, 'completed', { version: 2, key: `${keyPrefix}-b` });
      const suspended = await makeRun(store(), workflow, 'suspended');
      const cancelled = await makeRun(store(), workflow, 'cancelled');
      const owner = uniqueId('worker');
      const running = await makeRun(store(), workflow, 'running', { owner });
      const list = async (query: RunQuery) =>
        ids((await store().runs.list({ workflow, ...query })).runs).sort();

      expect(await list({ status: 'failed' })).toEqual([failed.runId]);
      expect(await list({ status: ['failed', 'cancelled'] })).toEqual([failed.runId, cancelled.runId].sort());
      expect(await list({ status: ['suspended'] })).toEqual([suspended.runId]);
      expect(await list({ version: 2 })).toEqual([completed.runId]);
      expect(await list({ idempotencyKeyPrefix: keyPrefix })).toEqual([failed.runId, completed.runId].sort());
      expect(await list({ idempotencyKeyPrefix: `${keyPrefix}-b` })).toEqual([completed.runId]);
      expect(await list({ runIdPrefix: running.runId.slice(0, -2) })).toContain(running.runId);
      expect(await list({ runIdPrefix: running.runId })).toEqual([running.runId]);
      expect(await list({ worker: owner })).toEqual([running.runId]);
      // Across workflows: the owner alone finds it too; filters combine with AND.
      expect(ids((await store().runs.list({ worker: owner })).runs)).toEqual([running.runId]);
      expect(await list({ status: 'failed', version: 2 })).toEqual([]);
      expect(ids((await store().runs.list({ workflow: uniqueId('wf-none') })).runs)).toEqual([]);
    });

    it('filters by created-at and updated-at ranges (after inclusive, before exclusive)', async () => {
      const workflow = uniqueId('wf-time');
      const first = await makeRun(store(), workflow, 'pending');
      await sleep(20);
      const second = await makeRun(store(), workflow, 'pending');
      const records = await Promise.all([first, second].map((m) => store().runs.get(m.runId)));
      const [a, b] = records as [NonNullable<(typeof records)[0]>, NonNullable<(typeof records)[1]>];
      expect(b.createdAt).toBeGreaterThan(a.createdAt);
      const list = async (query: RunQuery) => ids((await store().runs.list({ workflow, ...query })).runs);
      expect(await list({ createdAfter: b.createdAt })).toEqual([second.runId]);
      expect(await list({ createdBefore: b.createdAt })).toEqual([first.runId]);
      expect(await list({ createdAfter: a.createdAt, createdBefore: b.createdAt + 1 })).toEqual([
        second.runId,
        first.runId,
      ]);
      // Claiming the first run later moves its updatedAt, not its place in the order.
      await sleep(20);
      await acquireOk(store(), first.runId, 'worker-t');
      const moved = (await store().runs.get(first.runId))!;
      expect(moved.updatedAt).toBeGreaterThan(b.updatedAt);
      expect(await list({ updatedAfter: moved.updatedAt })).toEqual([first.runId]);
      expect(await list({ updatedBefore: moved.updatedAt })).toEqual([second.runId]);
      expect(await list({})).toEqual([second.runId, first.runId]);
    });

    it('pages with a cursor: every run once, in order, while runs change status between pages', async () => {
      const workflow = uniqueId('wf-page');
      const made: Made[] = [];
      for (let i = 0; i < 7; i++) {
        made.push(await makeRun(store(), workflow, 'pending'));
        if (i % 2 === 0) await sleep(2);
      }
      const expected = newestFirst(made);
      const first = await store().runs.list({ workflow, limit: 3 });
      expect(ids(first.runs)).toEqual(expected.slice(0, 3));
      expect(first.cursor).toEqual(expect.any(String));
      // Runs change between pages (one on the next page is claimed, one already seen finishes).
      await acquireOk(store(), expected[4]!, 'worker-p');
      const seenEpoch = await acquireOk(store(), expected[0]!, 'worker-p');
      await store().runs.finish(expected[0]!, seenEpoch, COMPLETED);
      const second = await store().runs.list({ workflow, limit: 3, cursor: first.cursor! });
      expect(ids(second.runs)).toEqual(expected.slice(3, 6));
      const third = await store().runs.list({ workflow, limit: 3, cursor: second.cursor! });
      expect(ids(third.runs)).toEqual(expected.slice(6));
      expect(third.cursor).toBeUndefined();
      // A status filter pages the same way.
      const pages = await allPages(store(), { workflow, status: 'pending', limit: 2 });
      expect(pages.flat().map((r) => r.runId)).toEqual(expected.filter((_, i) => i !== 0 && i !== 4));
      expect(pages.every((p) => p.length <= 2)).toBe(true);
    });

    it('refuses a malformed cursor, a cursor of another query and an invalid filter, naming the field', async () => {
      const workflow = uniqueId('wf-bad');
      for (let i = 0; i < 3; i++) await makeRun(store(), workflow, 'pending');
      const { cursor } = await store().runs.list({ workflow, limit: 1 });
      const refused = async (query: RunQuery, field: RegExp) =>
        expect(store().runs.list(query)).rejects.toMatchObject({ code: 'BATON_CONFIG', message: field });
      await refused({ workflow, cursor: 'not-a-cursor' }, /cursor is malformed/);
      await refused({ workflow, cursor: cursor!.slice(0, -4) }, /cursor is malformed/);
      await refused({ workflow, status: 'failed', cursor: cursor! }, /cursor is malformed.*another filter/);
      await refused(
        { workflow, order: 'oldest', cursor: cursor! },
        /cursor is malformed.*another filter or order/,
      );
      await refused({ workflow, limit: 0 }, /limit/);
      await refused({ workflow, limit: 1_001 }, /limit/);
      await refused({ workflow, status: 'lost' as RunStatus }, /status 'lost' is not a run status/);
      await refused({ workflow, status: [] }, /status is empty/);
      await refused({ workflow, createdAfter: 10, createdBefore: 10 }, /createdAfter/);
      await refused({ workflow, version: 0 }, /version/);
    });

    it('counts runs by status and by workflow and status, as they change', async () => {
      const workflow = uniqueId('wf-count');
      const before = await store().runs.count();
      const pending = await makeRun(store(), workflow, 'pending');
      await makeRun(store(), workflow, 'failed');
      await makeRun(store(), workflow, 'completed');
      const after = await store().runs.count();
      expect(after.byWorkflow[workflow]).toEqual({ pending: 1, failed: 1, completed: 1 });
      // Other tests share the store: compare what this test added, at least.
      expect(after.total).toBeGreaterThanOrEqual(before.total + 3);
      expect(after.byStatus.failed).toBeGreaterThanOrEqual(before.byStatus.failed + 1);
      expect(Object.keys(after.byStatus).sort()).toEqual([
        'cancelled',
        'completed',
        'failed',
        'paused',
        'pending',
        'running',
        'suspended',
      ]);
      const epoch = await acquireOk(store(), pending.runId, 'worker-c');
      expect((await store().runs.count()).byWorkflow[workflow]).toEqual({
        running: 1,
        failed: 1,
        completed: 1,
      });
      await store().runs.finish(pending.runId, epoch, COMPLETED);
      expect((await store().runs.count()).byWorkflow[workflow]).toEqual({ failed: 1, completed: 2 });
      await store().retention.delete(pending.runId);
      expect((await store().runs.count()).byWorkflow[workflow]).toEqual({ failed: 1, completed: 1 });
      expect(ids((await store().runs.list({ workflow })).runs)).not.toContain(pending.runId);
    });
  });
}
