/**
 * The store's work per run, batched across the runs of the process. A worker calls
 * runs.createAndLease, control.closeCancels and runs.finish once per run; each call alone is a
 * statement, so a transaction and a commit (an fsync, or a wait for the synchronous standby).
 * Here the calls of each kind from all runs gather and go as one statement, a call of migration
 * 029's function for that kind (create_runs_and_lease, close_cancels_of, finish_runs), which does
 * what the one-run function does for every element of its arrays, set-wise: one transaction and
 * one commit for all, and the run counters' triggers fire once per table, not once per run (per
 * run, two batches took the counter rows in the runs' order and deadlocked on them). The one-run
 * functions stay, for the single-call path here and for workers of the previous version.
 *
 * Invariants:
 * 1. A call answers with what its element of the function's answer says, read by the same code
 *    as the single-call path (runs.ts, control.ts): a fenced call fails with its FencedWriteError
 *    while the others of its batch succeed. A batch of one goes as the single-call statement.
 * 2. A batch is one statement, so it commits whole or not at all. When it fails with anything but
 *    a lost connection (a bad value, a deadlock repeated past Db's attempts, a timeout), nothing
 *    of it committed, and each of its calls runs again on its own, so a call that cannot succeed
 *    fails alone. When the connection was lost (or the pool is closing) the commit may or may not
 *    have happened, as for a single call: every call of the batch fails with that error, and
 *    none is retried here.
 * 3. A batch holds at most one call per run (the functions take each run once); the functions
 *    lock the lease rows in run id order first, so batches sharing runs never deadlock on them.
 * 4. Each call's errors are raised inside the store's operation runner (postgres-store.ts), so
 *    they are mapped as any other operation's; the batches use the store's pool, whose sessions
 *    carry the store's synchronous_commit, so a batch's commit waits for what a single one would.
 *
 * Flush policy, per kind: the first call after a quiet spell goes at the end of the event loop
 * turn (setImmediate), with every call made in that turn. At most {@link MAX_IN_FLIGHT} batches
 * are in flight; calls made meanwhile gather and go when one answers, at most
 * {@link MAX_CALLS} per statement.
 */
import type { QueryResultRow } from 'pg';
import { CallBatcher, type OperationsOf, type RunControlStore, type RunIndex } from '@baton/core/adapter';
import { cancelsClosed, CLOSE_CANCELS_SQL, type CloseCancelsRow } from './control.js';
import type { Db } from './db.js';
import { isConnectionFailure } from './errors.js';
import {
  CREATE_AND_LEASE_SQL,
  createAndLeaseParams,
  createdAndLeased,
  FINISH_SQL,
  finished,
  finishParams,
  type CreateAndLeaseRow,
} from './runs.js';

/** Batches of one kind in flight at once. */
export const MAX_IN_FLIGHT = 2;
/** Calls in one statement at most. */
export const MAX_CALLS = 256;

/** One kind of call: its single-call statement, and the statement of many. */
export interface BatchStatements {
  /** One call: parameters $1..$n. */
  single: string;
  /**
   * Many calls: the same n parameters, each an array with one element per call, answering at
   * most one row per call, with the call's 1-based place in the arrays as `ord`.
   */
  batch: string;
}

interface Call<R> {
  /** The run the call is for: a batch takes one call per run (invariant 3). */
  runId: string;
  params: unknown[];
  resolve(row: R | undefined): void;
  reject(err: unknown): void;
}

/** Gathers the calls of one kind and sends them in batches; see the module comment. */
export class Batcher<R extends QueryResultRow> {
  private readonly batcher = new CallBatcher<Call<R>>({
    maxBatch: MAX_CALLS,
    maxInFlight: MAX_IN_FLIGHT,
    runOf: (call) => call.runId,
    send: (calls) => this.send(calls),
  });

  constructor(
    private readonly db: Db,
    private readonly statements: BatchStatements,
  ) {}

  /** The row this call's function returned (undefined for none), once its batch answered. */
  call(runId: string, params: unknown[]): Promise<R | undefined> {
    return new Promise<R | undefined>((resolve, reject) =>
      this.batcher.add({ runId, params, resolve, reject }),
    );
  }

  /** Settles every call; never rejects. */
  private async send(calls: Call<R>[]): Promise<void> {
    if (calls.length === 1) return this.alone(calls[0]!);
    let rows: (R & { ord: number })[];
    try {
      const width = calls[0]!.params.length;
      const columns = Array.from({ length: width }, (_, k) => calls.map((c) => c.params[k]));
      rows = await this.db.query<R & { ord: number }>(this.statements.batch, columns);
    } catch (err) {
      if (isConnectionFailure(err) || this.db.pool.ending) {
        for (const call of calls) call.reject(err);
        return;
      }
      // Nothing of the batch committed (invariant 2): each call on its own.
      await Promise.all(calls.map((call) => this.alone(call)));
      return;
    }
    const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
    calls.forEach((call, i) => call.resolve(byOrd.get(i + 1)));
  }

  private async alone(call: Call<R>): Promise<void> {
    try {
      const [row] = await this.db.query<R>(this.statements.single, call.params);
      call.resolve(row);
    } catch (err) {
      call.reject(err);
    }
  }
}

// Migration 029's functions, each taking one array per parameter of its one-run function.
const CREATE_AND_LEASE_BATCH = `
SELECT * FROM {{schema}}.create_runs_and_lease($1::text[], $2::text[], $3::integer[], $4::json[], $5::text[],
  $6::text[], $7::text[], $8::bigint[])`;

const CLOSE_CANCELS_BATCH = 'SELECT * FROM {{schema}}.close_cancels_of($1::text[], $2::bigint[])';

const FINISH_BATCH = `
SELECT * FROM {{schema}}.finish_runs($1::text[], $2::bigint[], $3::text[], $4::json[], $5::json[], $6::bigint[],
  $7::bigint[], $8::bigint[], $9::text[], $10::integer[], $11::bigint[], $12::integer[], $13::json[])`;

/**
 * The store's batched operations over one pool: they replace runs.createAndLease, runs.finish
 * and control.closeCancels in the store's capabilities. The Db each operation is handed is the
 * pool the batches were made with.
 */
export class RunBatches {
  private readonly creates: Batcher<CreateAndLeaseRow>;
  private readonly closes: Batcher<CloseCancelsRow>;
  private readonly finishes: Batcher<{ finished: boolean }>;

  constructor(db: Db) {
    this.creates = new Batcher(db, { single: CREATE_AND_LEASE_SQL, batch: CREATE_AND_LEASE_BATCH });
    this.closes = new Batcher(db, { single: CLOSE_CANCELS_SQL, batch: CLOSE_CANCELS_BATCH });
    this.finishes = new Batcher(db, { single: FINISH_SQL, batch: FINISH_BATCH });
  }

  readonly runs: Pick<OperationsOf<Db, RunIndex>, 'createAndLease' | 'finish'> = {
    // Parameters are encoded at the call, so a value that cannot be stored fails there, as alone.
    createAndLease: async (_db, run, owner, ttlMs) =>
      createdAndLeased(
        run.runId,
        await this.creates.call(run.runId, createAndLeaseParams(run, owner, ttlMs)),
      ),
    finish: async (_db, runId, epoch, outcome, checkpoint) =>
      finished(
        runId,
        epoch,
        await this.finishes.call(runId, finishParams(runId, epoch, outcome, checkpoint)),
      ),
  };

  readonly control: Pick<OperationsOf<Db, RunControlStore>, 'closeCancels'> = {
    closeCancels: async (_db, runId, epoch) =>
      cancelsClosed(runId, epoch, await this.closes.call(runId, [runId, epoch])),
  };
}
