import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  BackendUnavailableError,
  type NewRunToLease,
  type RunOutcome,
  type Store,
} from '@baton/core/adapter';
import { STORE_APPLICATION_PREFIX } from './db.js';
import { postgresStore } from './index.js';
import { TestSchemas, admin, backendsOf, terminate, url, waitFor } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());
afterEach(() => vi.restoreAllMocks());

const FENCED = { name: 'FencedWriteError' };

/**
 * Counts the statements the store's pool sends whose text contains `fn` (a function's name, or
 * the start shared by the one-run and the batch function's names). The pool is the store's db
 * layer: every statement of the store goes through its query method.
 */
function countStatements(store: Store): (fn: string) => number {
  const pool = (store as unknown as { db: { pool: pg.Pool } }).db.pool;
  const spy = vi.spyOn(pool, 'query');
  return (fn) =>
    spy.mock.calls.filter(([query]) => {
      const text = typeof query === 'string' ? query : (query as { text: string }).text;
      return text.includes(fn);
    }).length;
}

const newRun = (runId: string, extra: Partial<NewRunToLease> = {}): NewRunToLease => ({
  runId,
  workflow: 'w',
  version: 1,
  input: { n: runId },
  idempotencyKey: null,
  ...extra,
});

const ids = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);

describe('postgres store: a run’s claim, cancel close and finish, batched across runs', () => {
  it('answers many concurrent calls as each would be answered alone, in fewer statements than calls', async () => {
    const store = schemas.store();
    try {
      await store.connect();
      const statements = countStatements(store);
      const runIds = ids(60, 'run');

      // Claims, with a second start of the first run and a start reusing the second run's key.
      const claims = await Promise.all([
        ...runIds.map((id, i) =>
          store.runs.createAndLease(newRun(id, { idempotencyKey: `key-${i}` }), 'w1', 30_000),
        ),
        store.runs.createAndLease(newRun(runIds[0]!), 'w2', 30_000),
        store.runs.createAndLease(newRun('other', { idempotencyKey: 'key-1' }), 'w2', 30_000),
      ]);
      for (const [i, id] of runIds.entries()) {
        if (i === 1) continue;
        expect(claims[i]).toMatchObject({
          created: true,
          run: { runId: id, status: 'running', input: { n: id }, idempotencyKey: `key-${i}`, attempts: 1 },
          lease: { ok: true, epoch: 1 },
        });
      }
      expect(claims[60]).toMatchObject({ created: false, run: { runId: runIds[0], status: 'running' } });
      // Two runs under one key: one is created and leased, the other answered with it.
      const [winner, loser] = claims[1]!.created ? [claims[1]!, claims[61]!] : [claims[61]!, claims[1]!];
      expect(winner).toMatchObject({ created: true, run: { idempotencyKey: 'key-1' }, lease: { ok: true } });
      expect(loser).toEqual({ created: false, run: winner.run });
      const leased = runIds.map((id) => (id === runIds[1] ? winner.run.runId : id));
      expect(statements('create_run')).toBeLessThan(claims.length);

      // Cancel closes: five runs asked to cancel, one close under a stale epoch.
      const cancelled = leased.slice(0, 5);
      for (const id of cancelled) await store.control.requestCancel(id, `stop ${id}`);
      const closes = await Promise.allSettled([
        ...leased.map((id) => store.control.closeCancels(id, 1)),
        store.control.closeCancels(leased[10]!, 7),
      ]);
      for (const [i, id] of leased.entries()) {
        expect(closes[i]).toEqual({
          status: 'fulfilled',
          value: i < 5 ? { cancelRequested: true, cancelReason: `stop ${id}` } : { cancelRequested: false },
        });
      }
      expect(closes[60]).toMatchObject({ status: 'rejected', reason: FENCED });
      expect(statements('close_cancels')).toBeLessThan(closes.length);
      expect(await store.control.requestCancel(leased[20]!, 'late')).toMatchObject({ tooLate: true });

      // Finishes: the cancelled runs as cancelled, the others completed, one under a stale epoch.
      const outcomeOf = (id: string): RunOutcome =>
        cancelled.includes(id)
          ? { status: 'cancelled', error: { name: 'CancelledError', message: `stop ${id}` } }
          : { status: 'completed', result: { done: id } };
      const finishes = await Promise.allSettled([
        ...leased.map((id) => store.runs.finish(id, 1, outcomeOf(id))),
        store.runs.finish(leased[30]!, 2, { status: 'completed', result: 'stale' }),
      ]);
      for (let i = 0; i < leased.length; i++)
        expect(finishes[i]).toEqual({ status: 'fulfilled', value: undefined });
      expect(finishes[60]).toMatchObject({ status: 'rejected', reason: FENCED });
      expect(statements('finish_run')).toBeLessThan(finishes.length);
      for (const id of leased) {
        const record = await store.runs.get(id);
        if (cancelled.includes(id))
          expect(record).toMatchObject({ status: 'cancelled', error: { message: `stop ${id}` } });
        else expect(record).toMatchObject({ status: 'completed', result: { done: id } });
      }
      // The run counters (kept by triggers on runs) saw every batched change.
      expect((await store.runs.count()).byWorkflow).toEqual({ w: { cancelled: 5, completed: 55 } });
      // Finished: a second finish is fenced.
      await expect(store.runs.finish(leased[40]!, 1, outcomeOf(leased[40]!))).rejects.toMatchObject(FENCED);
    } finally {
      await store.close();
    }
  });

  it('sends at most 256 calls in one statement, and a run at most once', async () => {
    const store = schemas.store();
    try {
      await store.connect();
      const pool = (store as unknown as { db: { pool: pg.Pool } }).db.pool;
      const spy = vi.spyOn(pool, 'query');
      // Runs the store does not know: every close is fenced, each on its own.
      const runIds = [...ids(600, 'unknown'), 'unknown-000', 'unknown-000'];
      const closes = await Promise.allSettled(runIds.map((id) => store.control.closeCancels(id, 1)));
      for (const close of closes) expect(close).toMatchObject({ status: 'rejected', reason: FENCED });
      // A prepared statement goes as one object with its values; an unprepared one as text and values.
      const batches = spy.mock.calls
        .map(([query, values]) =>
          typeof query === 'string'
            ? { text: query, values: values as unknown[] }
            : (query as unknown as { text: string; values: unknown[] }),
        )
        .filter(({ text }) => text.includes('close_cancels_of'))
        .map(({ values }) => values[0] as string[]);
      expect(batches.length).toBeGreaterThanOrEqual(3);
      for (const batch of batches) {
        expect(batch.length).toBeLessThanOrEqual(256);
        expect(new Set(batch).size).toBe(batch.length);
      }
    } finally {
      await store.close();
    }
  });

  it('keeps each batched finish’s result and final checkpoint', async () => {
    const store = schemas.store();
    try {
      const runIds = ids(8, 'cp');
      // Text that an array literal must escape, in the arrays' JSON elements.
      const tricky = 'quote " backslash \\ {braces}, comma NULL';
      await Promise.all(runIds.map((id) => store.runs.createAndLease(newRun(id), 'w', 30_000)));
      await Promise.all(
        runIds.map((id, i) =>
          store.runs.finish(
            id,
            1,
            { status: 'completed', result: { i, tricky } },
            {
              runId: id,
              seq: 3,
              epoch: 1,
              journalPosition: 10 + i,
              entries: [],
              status: 'completed',
              schemaVersion: 1,
              createdAt: 1_000 + i,
            },
          ),
        ),
      );
      for (const [i, id] of runIds.entries()) {
        expect(await store.runs.get(id)).toMatchObject({ status: 'completed', result: { i, tricky } });
        expect(await store.checkpoints.load(id)).toMatchObject({
          seq: 3,
          journalPosition: 10 + i,
          createdAt: 1_000 + i,
        });
      }
    } finally {
      await store.close();
    }
  });

  it('claims a new run whose lease row is left from before as a call alone does', async () => {
    // A lease row without its run: one held by another owner, one handed off (free).
    const prepare = async (store: Store) => {
      await store.leases.acquire('held-before', 'someone', 60_000);
      await store.leases.acquire('free-before', 'someone', 60_000);
      await store.leases.release('free-before', 1);
    };
    const strip = (answer: unknown) =>
      JSON.parse(
        JSON.stringify(answer, (k, v: unknown) => (/At$|expiresAt/.test(k) ? undefined : v)),
      ) as unknown;
    const alone = schemas.store();
    const batched = schemas.store();
    try {
      await Promise.all([prepare(alone), prepare(batched)]);
      const statements = countStatements(batched);
      const expected = [];
      for (const id of ['held-before', 'free-before'])
        expected.push(strip(await alone.runs.createAndLease(newRun(id), 'w', 30_000)));
      const answers = await Promise.all(
        ['a-new', 'held-before', 'free-before', 'z-new'].map((id) =>
          batched.runs.createAndLease(newRun(id), 'w', 30_000),
        ),
      );
      expect(statements('create_runs_and_lease')).toBe(1);
      expect(answers.slice(1, 3).map(strip)).toEqual(expected);
      expect(expected).toMatchObject([
        { created: true, run: { status: 'pending' }, lease: { ok: false } },
        { created: true, run: { status: 'running' }, lease: { ok: true, epoch: 2 } },
      ]);
      for (const i of [0, 3])
        expect(answers[i]).toMatchObject({ created: true, lease: { ok: true, epoch: 1 } });
    } finally {
      await Promise.all([alone.close(), batched.close()]);
    }
  });

  it('fails a call whose statement fails alone, and answers the others of its batch', async () => {
    const store = schemas.store();
    try {
      await store.connect();
      const statements = countStatements(store);
      const runIds = ids(12, 'bad');

      // A version out of the integer range fails the whole batch statement: each call then goes alone.
      const claims = await Promise.allSettled(
        runIds.map((id, i) =>
          store.runs.createAndLease(newRun(id, { version: i === 3 ? 2 ** 31 : 1 }), 'w', 30_000),
        ),
      );
      expect(claims[3]).toMatchObject({ status: 'rejected', reason: { code: 'BATON_PG_QUERY' } });
      for (const [i, id] of runIds.entries()) {
        if (i === 3) continue;
        expect(claims[i]).toMatchObject({
          status: 'fulfilled',
          value: { created: true, run: { runId: id } },
        });
      }
      expect(await store.runs.get(runIds[3]!)).toBeUndefined();
      // The batch, then each call alone.
      expect(statements('create_run')).toBeGreaterThan(runIds.length);

      // A status the table refuses rolls back the batch's other finishes, which then go alone;
      // a stale epoch is fenced in the same batch.
      const live = runIds.filter((_, i) => i !== 3);
      const finishes = await Promise.allSettled(
        live.map((id, i) =>
          store.runs.finish(
            id,
            i === 5 ? 9 : 1,
            i === 2 ? ({ status: 'bogus', result: 1 } as never) : { status: 'completed', result: i },
          ),
        ),
      );
      for (const [i, id] of live.entries()) {
        if (i === 2) {
          expect(finishes[i]).toMatchObject({ status: 'rejected', reason: { code: 'BATON_PG_QUERY' } });
          expect(await store.runs.get(id)).toMatchObject({ status: 'running' });
        } else if (i === 5) {
          expect(finishes[i]).toMatchObject({ status: 'rejected', reason: FENCED });
          expect(await store.runs.get(id)).toMatchObject({ status: 'running' });
        } else {
          expect(finishes[i]).toEqual({ status: 'fulfilled', value: undefined });
          expect(await store.runs.get(id)).toMatchObject({ status: 'completed', result: i });
        }
      }
    } finally {
      await store.close();
    }
  });

  it('fails every call of a batch whose connection is lost, and runs none of them again', async () => {
    const schema = schemas.name();
    const store = postgresStore({ url, schema, poolSize: 4 });
    const locker = new pg.Client({ connectionString: url });
    try {
      const runIds = ids(3, 'lost');
      await Promise.all(runIds.map((id) => store.runs.createAndLease(newRun(id), 'w', 60_000)));
      const statements = countStatements(store);
      // Another session holds one lease row, so the batch waits on it with its connection open.
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM "${schema}".leases WHERE run_id = $1 FOR UPDATE`, [runIds[1]]);
      const finishes = Promise.allSettled(
        runIds.map((id) => store.runs.finish(id, 1, { status: 'completed', result: id })),
      );
      const application = `${STORE_APPLICATION_PREFIX}${schema}`;
      await waitFor('the batch to wait for the lease row', async () => {
        const waiting = await admin(
          `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
          [application],
        );
        return waiting.length > 0;
      });
      await terminate(await backendsOf(application));
      for (const finish of await finishes) {
        expect(finish).toMatchObject({
          status: 'rejected',
          reason: { code: 'BATON_PG_QUERY', retryable: true },
        });
        expect((finish as PromiseRejectedResult).reason).toBeInstanceOf(BackendUnavailableError);
      }
      expect(statements('finish_runs(')).toBe(1);
      expect(statements('finish_run(')).toBe(0);
      await locker.query('ROLLBACK');
      for (const id of runIds) expect(await store.runs.get(id)).toMatchObject({ status: 'running' });
    } finally {
      await locker.end().catch(() => undefined);
      await store.close();
    }
  });
});
