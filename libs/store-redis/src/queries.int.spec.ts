/**
 * The Redis store's run-query indexes (the conformance suite checks runs.list and runs.count as the
 * contract says): every script that changes a run keeps them equal to what the run records say;
 * data written before the indexes existed is indexed at connect or by reindexRuns, once; runs tied
 * on createdAt come in run-id order across pages; a page cut short by the scan budget carries on.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type {
  Checkpoint,
  CheckedRunQuery,
  ListedRun,
  RunPosition,
  RunQuery,
  RunStatus,
} from '@baton/core/adapter';
import { redisTestUrl } from '@baton/testing/servers';
import { redisStore } from './index.js';
import { keyLayout } from './keys.js';
import { INDEX_VERSION, listRuns } from './queries.js';
import { storeContext } from './context.js';
import { testPrefixes } from './test-prefixes.spec-helper.js';

const prefixes = testPrefixes(redisTestUrl());

/**
 * `query` as `checkedStore` hands it to the adapter, 10 runs a page from `after`: the specs of the
 * scan budget call the Redis listing itself, with a budget of their own (the store's checks and
 * cursors are the conformance suite's).
 */
function checked({ order = 'newest', ...filter }: RunQuery, after: RunPosition | undefined): CheckedRunQuery {
  return { filter, statuses: undefined, order, limit: 10, after };
}
const opened: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close()));
});
afterAll(() => prefixes.cleanUp());

function admin(): Redis {
  const redis = new Redis(redisTestUrl());
  opened.push({ close: () => redis.disconnect() });
  return redis;
}

async function openStore(keyPrefix: string) {
  const store = redisStore({ url: redisTestUrl(), keyPrefix });
  opened.push(store);
  await store.connect();
  return store;
}

/** Every key under `prefix` matching `pattern` (the prefix's glob characters are none here). */
async function keysOf(redis: Redis, prefix: string, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}${pattern}`, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found.sort();
}

/** The indexes as stored: each sorted set's members with scores, and the counts hash. */
async function storedIndexes(redis: Redis, prefix: string) {
  const sets: Record<string, Record<string, number>> = {};
  for (const key of await keysOf(redis, prefix, 'index:*')) {
    if (key === `${prefix}index:counts`) continue;
    const pairs = await redis.zrange(key, 0, -1, 'WITHSCORES');
    const members: Record<string, number> = {};
    for (let i = 0; i < pairs.length; i += 2) members[pairs[i]!] = Number(pairs[i + 1]);
    sets[key.slice(prefix.length)] = members;
  }
  const counts = Object.fromEntries(
    Object.entries(await redis.hgetall(`${prefix}index:counts`)).map(([f, v]) => [f, Number(v)]),
  );
  return { sets, counts };
}

/** The indexes as the run records say they should be, computed here from every `run:` hash. */
async function expectedIndexes(redis: Redis, prefix: string) {
  const sets: Record<string, Record<string, number>> = {};
  const counts: Record<string, number> = {};
  const add = (key: string, runId: string, createdAt: number) => ((sets[key] ??= {})[runId] = createdAt);
  for (const key of await keysOf(redis, prefix, 'run:*')) {
    const run = await redis.hgetall(key);
    const createdAt = Number(run.createdAt);
    add('index:all', run.runId!, createdAt);
    add(`index:status:${run.status}`, run.runId!, createdAt);
    add(`index:workflow:${run.workflow}`, run.runId!, createdAt);
    add('index:ids', run.runId!, 0);
    if (run.idempotencyKey !== undefined) add('index:keys', `${run.idempotencyKey}\0${run.runId}`, 0);
    for (const field of [`status:${run.status}`, `workflow:${run.status}:${run.workflow}`])
      counts[field] = (counts[field] ?? 0) + 1;
  }
  return { sets, counts };
}

const checkpoint = (runId: string, epoch: number, seq: number): Checkpoint => ({
  runId,
  seq,
  epoch,
  journalPosition: seq,
  entries: [],
  status: 'running',
  schemaVersion: 1,
  createdAt: 1_700_000_000_000 + seq,
});

async function acquire(store: Awaited<ReturnType<typeof openStore>>, runId: string, owner = 'w1') {
  const lease = await store.leases.acquire(runId, owner, 30_000);
  if (!lease.ok) throw new Error(`could not acquire ${runId}: ${JSON.stringify(lease)}`);
  return lease.epoch;
}

describe('redis store: run query indexes', () => {
  it('keeps the indexes equal to the run records through every status change and delete', async () => {
    const prefix = prefixes.next();
    const redis = admin();
    const store = await openStore(prefix);
    const create = (runId: string, workflow = 'wf:a') =>
      store.runs.create({ runId, workflow, version: 1, input: {}, idempotencyKey: null });
    const check = async () =>
      expect(await storedIndexes(redis, prefix)).toEqual(await expectedIndexes(redis, prefix));

    for (const id of ['p', 'r', 's', 'c', 'f', 'x', 'd', 'e']) await create(id, id === 'x' ? 'wf:b' : 'wf:a');
    await store.runs.createAndLease(
      { runId: 'l', workflow: 'wf:b', version: 2, input: {}, idempotencyKey: 'k-1' },
      'w2',
      30_000,
    );
    await check();

    await acquire(store, 'r');
    // Suspend, then a signal wakes it and another worker takes it: running again.
    const s1 = await acquire(store, 's');
    expect(
      await store.leases.suspend({
        runId: 's',
        epoch: s1,
        wakeAt: null,
        signals: ['go'],
        consumedSignalIds: [],
      }),
    ).toEqual({ ok: true });
    await check();
    await store.signals.deliver('s', { signalId: 'sig-1', name: 'go', payload: null });
    await acquire(store, 's', 'w2');
    // Cancelled and completed; a failure redriven back to pending.
    const c1 = await acquire(store, 'c');
    await store.control.requestCancel('c', 'stop');
    await store.runs.finish('c', c1, {
      status: 'cancelled',
      error: { name: 'CancelledError', message: 'stop' },
    });
    const f1 = await acquire(store, 'f');
    await store.runs.finish('f', f1, { status: 'failed', error: { name: 'Error', message: 'boom' } });
    await check();
    expect(await store.runs.reopen('f', checkpoint('f', f1, 1))).toEqual({ reopened: true });
    // Deleted by id, and by the retention sweep.
    for (const id of ['d', 'e']) {
      const epoch = await acquire(store, id);
      await store.runs.finish(id, epoch, { status: 'completed', result: 1 });
    }
    expect(await store.retention.delete('d')).toBe(true);
    // The sweep takes every finished run: the cancelled one and 'e', oldest finish first.
    expect(await store.retention.deleteExpired(0, 10, 60_000)).toEqual(['c', 'e']);
    await check();

    const counts = await store.runs.count();
    expect(counts).toEqual({
      total: 6,
      byStatus: { pending: 3, running: 3, suspended: 0, paused: 0, completed: 0, failed: 0, cancelled: 0 },
      byWorkflow: { 'wf:a': { pending: 2, running: 2 }, 'wf:b': { pending: 1, running: 1 } },
    });
    expect((await store.runs.list({ worker: 'w2' })).runs.map((r) => r.runId).sort()).toEqual(['l', 's']);
  });

  it('indexes data written before the indexes existed at connect, once, and again on request', async () => {
    const prefix = prefixes.next();
    const redis = admin();
    const old = await openStore(prefix);
    for (let i = 0; i < 30; i++)
      await old.runs.create({
        runId: `old-${i}`,
        workflow: `wf-${i % 3}`,
        version: 1,
        input: {},
        idempotencyKey: null,
      });
    const epoch = await acquire(old, 'old-0');
    await old.runs.finish('old-0', epoch, { status: 'completed', result: 1 });
    const before = await old.runs.count();
    // What an older version of the store left behind: the records, and no index at all.
    const indexKeys = await keysOf(redis, prefix, 'index*');
    expect(indexKeys).toContain(`${prefix}index-version`);
    await redis.del(...indexKeys);
    expect((await old.runs.count()).total).toBe(0);

    // A status change before any reindex indexes that run by itself (and only it).
    await acquire(old, 'old-1');
    expect((await old.runs.count()).byStatus.running).toBe(1);
    expect((await old.runs.count()).total).toBe(1);

    const fresh = await openStore(prefix);
    expect(await redis.get(`${prefix}index-version`)).toBe(INDEX_VERSION);
    expect(await storedIndexes(redis, prefix)).toEqual(await expectedIndexes(redis, prefix));
    expect(await fresh.runs.count()).toEqual({
      ...before,
      byStatus: { ...before.byStatus, pending: before.byStatus.pending - 1, running: 1 },
      byWorkflow: {
        ...before.byWorkflow,
        'wf-1': { pending: before.byWorkflow['wf-1']!.pending! - 1, running: 1 },
      },
    });
    expect(await fresh.reindexRuns()).toBe(0);
    expect(await storedIndexes(redis, prefix)).toEqual(await expectedIndexes(redis, prefix));

    // A data set indexed by version 1 (no prefix indexes): the next connect adds them, and only them.
    const counted = await fresh.runs.count();
    await redis.del(`${prefix}index:ids`, `${prefix}index:keys`);
    await redis.set(`${prefix}index-version`, '1');
    await openStore(prefix);
    expect(await redis.get(`${prefix}index-version`)).toBe(INDEX_VERSION);
    expect(await storedIndexes(redis, prefix)).toEqual(await expectedIndexes(redis, prefix));
    expect(await fresh.runs.count()).toEqual(counted);
  });

  it('orders runs tied on createdAt by run id, bytewise, across pages in both orders, one index or several merged', async () => {
    const prefix = prefixes.next();
    const redis = admin();
    // Records as an older version wrote them, all created in the same millisecond, then indexed.
    const runIds = ['b', 'a', 'B', 'a-1', 'a0', 'aa', 'z', '0', 'é', 'Z9'];
    const statusOf = (runId: string): RunStatus =>
      (['pending', 'failed', 'completed'] as const)[runIds.indexOf(runId) % 3]!;
    for (const runId of runIds)
      await redis.hset(`${prefix}run:${runId}`, {
        runId,
        workflow: 'tied',
        version: '1',
        input: '{}',
        status: statusOf(runId),
        createdAt: '1700000000000',
        updatedAt: '1700000000000',
        attempts: '0',
      });
    await redis.hset(`${prefix}run:late`, {
      runId: 'late',
      workflow: 'tied',
      version: '1',
      input: '{}',
      status: 'pending',
      createdAt: '1700000000001',
      updatedAt: '1700000000001',
      attempts: '0',
    });
    const store = await openStore(prefix);
    const bytewise = [...runIds].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

    const pages = async (query: RunQuery) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await store.runs.list({ ...query, ...(cursor !== undefined && { cursor }) });
        expect(page.runs.length).toBeLessThanOrEqual(query.limit!);
        seen.push(...page.runs.map((r) => r.runId));
        if (page.cursor === undefined) return seen;
        cursor = page.cursor;
      }
      throw new Error('no last page');
    };
    expect(await pages({ workflow: 'tied', order: 'oldest', limit: 3 })).toEqual([...bytewise, 'late']);
    expect(await pages({ workflow: 'tied', order: 'newest', limit: 3 })).toEqual([
      'late',
      ...[...bytewise].reverse(),
    ]);
    // Two statuses: their sets are merged (together smaller than the workflow's), in the same order.
    const pendingOrFailed = bytewise.filter((id) => statusOf(id) !== 'completed');
    const twoStatuses: RunQuery = { workflow: 'tied', status: ['failed', 'pending'], limit: 2 };
    expect(await pages({ ...twoStatuses, order: 'oldest' })).toEqual([...pendingOrFailed, 'late']);
    expect(await pages({ ...twoStatuses, order: 'newest' })).toEqual([
      'late',
      ...[...pendingOrFailed].reverse(),
    ]);
  });

  it("lists a worker's runs from its owner set, in order across pages, within a created-at range", async () => {
    const prefix = prefixes.next();
    const store = await openStore(prefix);
    const held: { runId: string; createdAt: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const runId = `w-${String(i).padStart(2, '0')}`;
      const { run } = await store.runs.create({
        runId,
        workflow: 'owned',
        version: 1,
        input: {},
        idempotencyKey: null,
      });
      if (i % 2 === 0) {
        await acquire(store, runId, 'worker-o');
        held.push({ runId, createdAt: run.createdAt });
      } else await acquire(store, runId, 'worker-other');
    }
    const pages = async (query: RunQuery) => {
      const seen: ListedRun[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await store.runs.list({ ...query, limit: 2, ...(cursor !== undefined && { cursor }) });
        seen.push(...page.runs);
        if (page.cursor === undefined) return seen;
        cursor = page.cursor;
      }
      throw new Error('no last page');
    };
    const oldest = await pages({ worker: 'worker-o', order: 'oldest' });
    expect(oldest.map((r) => r.runId)).toEqual(held.map((r) => r.runId));
    expect(oldest.every((r) => r.owner === 'worker-o' && r.status === 'running' && r.epoch === 1)).toBe(true);
    expect((await pages({ worker: 'worker-o' })).map((r) => r.runId)).toEqual(
      held.map((r) => r.runId).reverse(),
    );
    const from = held[1]!.createdAt;
    const before = held[4]!.createdAt;
    expect(
      (await pages({ worker: 'worker-o', createdAfter: from, createdBefore: before })).map((r) => r.runId),
    ).toEqual(
      held
        .filter((r) => r.createdAt >= from && r.createdAt < before)
        .map((r) => r.runId)
        .reverse(),
    );
  });

  it('carries on from where a page cut short by the scan budget stopped', async () => {
    const prefix = prefixes.next();
    const redis = admin();
    const store = await openStore(prefix);
    const made: string[] = [];
    for (let i = 0; i < 25; i++) {
      const hit = i % 8 === 0;
      const runId = `${hit ? 'hit' : 'miss'}-${String(i).padStart(2, '0')}`;
      await store.runs.create({
        runId,
        workflow: 'budget',
        version: hit ? 2 : 1,
        input: {},
        idempotencyKey: null,
      });
      made.push(runId);
    }
    const ctx = storeContext(redis, keyLayout(prefix));
    const hits: ListedRun[] = [];
    let after: RunPosition | undefined;
    let pagesRead = 0;
    for (; pagesRead < 20; pagesRead++) {
      // A version has no index of its own: the walk reads all runs, 4 a page.
      const page = await listRuns(ctx, checked({ version: 2, order: 'oldest' }, after), 4);
      hits.push(...page.runs);
      if (page.next === undefined) break;
      after = page.next;
    }
    // 25 runs, 4 examined per page: 7 pages, some of them empty, and every hit once, in order.
    expect(pagesRead + 1).toBe(7);
    expect(hits.map((r) => r.runId)).toEqual(made.filter((id) => id.startsWith('hit')));
    expect(hits.map((r) => r.status as RunStatus)).toEqual(['pending', 'pending', 'pending', 'pending']);
  });

  it('answers a narrow run-id or idempotency-key prefix from its prefix index in one page, and walks for a broad one', async () => {
    const prefix = prefixes.next();
    const redis = admin();
    const store = await openStore(prefix);
    const made: { runId: string; key: string }[] = [];
    for (let i = 0; i < 25; i++) {
      const runId = `${i % 8 === 0 ? 'hit' : 'miss'}-${String(i).padStart(2, '0')}`;
      const key = `${i % 8 === 1 ? 'order' : 'other'}-${i}`;
      await store.runs.create({ runId, workflow: 'prefixes', version: 1, input: {}, idempotencyKey: key });
      made.push({ runId, key });
    }
    const ctx = storeContext(redis, keyLayout(prefix));
    const walk = async (query: RunQuery) => {
      const seen: string[] = [];
      let after: RunPosition | undefined;
      for (let pages = 1; pages <= 20; pages++) {
        const page = await listRuns(ctx, checked(query, after), 4);
        seen.push(...page.runs.map((r) => r.runId));
        if (page.next === undefined) return { seen, pages };
        after = page.next;
      }
      throw new Error('no last page');
    };
    // 4 runs start with 'hit' and 3 keys with 'order': at most the budget (4), so one page each,
    // where a walk of all 25 runs at 4 a page would take 7.
    const hits = made.filter((r) => r.runId.startsWith('hit')).map((r) => r.runId);
    expect(await walk({ runIdPrefix: 'hit', order: 'oldest' })).toEqual({ seen: hits, pages: 1 });
    expect(await walk({ runIdPrefix: 'hit' })).toEqual({ seen: [...hits].reverse(), pages: 1 });
    const orders = made.filter((r) => r.key.startsWith('order')).map((r) => r.runId);
    expect(await walk({ idempotencyKeyPrefix: 'order', order: 'oldest' })).toEqual({
      seen: orders,
      pages: 1,
    });
    expect(await walk({ idempotencyKeyPrefix: 'order-9', order: 'oldest' })).toEqual({
      seen: ['miss-09'],
      pages: 1,
    });
    expect(await walk({ runIdPrefix: 'nothing' })).toEqual({ seen: [], pages: 1 });
    // 21 runs start with 'miss', more than the budget: the walk reads every run, and finds each once.
    const misses = await walk({ runIdPrefix: 'miss', order: 'oldest' });
    expect(misses.seen).toEqual(made.filter((r) => r.runId.startsWith('miss')).map((r) => r.runId));
    expect(misses.pages).toBeGreaterThan(1);
    // Deleting a run takes it out of both prefix indexes.
    const lease = await store.leases.acquire('hit-00', 'w1', 30_000);
    if (!lease.ok) throw new Error('not acquired');
    await store.runs.finish('hit-00', lease.epoch, { status: 'completed', result: null });
    await store.retention.delete('hit-00');
    expect((await walk({ runIdPrefix: 'hit', order: 'oldest' })).seen).toEqual(hits.slice(1));
    expect(await redis.zscore(`${prefix}index:ids`, 'hit-00')).toBeNull();
    expect(await redis.zscore(`${prefix}index:keys`, 'other-0\0hit-00')).toBeNull();
    expect(await storedIndexes(redis, prefix)).toEqual(await expectedIndexes(redis, prefix));
  });
});
