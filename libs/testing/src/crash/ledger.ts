/**
 * The crash suite's ledger of side effects, in Postgres, written by the workflow's activities and
 * read by the test: the outside record that the invariants are checked against, never the
 * workers' own word.
 *
 * - `executions`: one row per activity execution (which process, when it started and ended);
 * - `effects`: one row per idempotency key (the effect), with `repeats` counting how often an
 *   execution tried to apply an effect that was already there (an in-flight activity re-run
 *   after a crash, which is allowed, with the same key).
 *
 * Workflow modules of the crash suite outside this package (examples/agent's) reach it through
 * `@baton/testing/ledger`, which loads nothing but this file and `pg`.
 */
import pg from 'pg';

export const LEDGER_URL_ENV = 'BATON_LEDGER_URL';
export const LEDGER_SCHEMA_ENV = 'BATON_LEDGER_SCHEMA';

export interface ExecutionRow {
  key: string;
  runId: string;
  step: number;
  pid: number;
  startedAt: number;
  finishedAt: number | null;
}

export interface EffectRow {
  key: string;
  runId: string;
  step: number;
  value: number;
  repeats: number;
}

function quoted(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid ledger schema name ${schema}`);
  return `"${schema}"`;
}

/** The ledger as the activities and the test see it. */
export class Ledger {
  private readonly pool: pg.Pool;
  private readonly schema: string;

  constructor(url: string, schema: string, poolSize = 4) {
    this.schema = quoted(schema);
    this.pool = new pg.Pool({ connectionString: url, max: poolSize });
    // A dropped idle connection must not crash a worker process; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async create(): Promise<void> {
    await this.pool.query(`
      create schema if not exists ${this.schema};
      create table if not exists ${this.schema}.executions (
        id bigserial primary key, key text not null, run_id text not null, step int not null,
        pid int not null, started_at bigint not null, finished_at bigint);
      create table if not exists ${this.schema}.effects (
        key text primary key, run_id text not null, step int not null, value bigint not null,
        repeats int not null default 0);`);
  }

  async drop(): Promise<void> {
    await this.pool.query(`drop schema if exists ${this.schema} cascade`);
  }

  /** Records the start of an execution; returns its id for {@link finishExecution}. */
  async startExecution(key: string, runId: string, step: number): Promise<number> {
    const { rows } = await this.pool.query<{ id: string }>(
      `insert into ${this.schema}.executions (key, run_id, step, pid, started_at) values ($1, $2, $3, $4, $5) returning id`,
      [key, runId, step, process.pid, Date.now()],
    );
    return Number(rows[0]?.id);
  }

  /** Applies the effect once per key (the way a real system honours an idempotency key). */
  async applyEffect(
    key: string,
    runId: string,
    step: number,
    value: number,
    executionId: number,
  ): Promise<void> {
    await this.pool.query(
      `with effect as (
         insert into ${this.schema}.effects (key, run_id, step, value) values ($1, $2, $3, $4)
         on conflict (key) do update set repeats = ${this.schema}.effects.repeats + 1)
       update ${this.schema}.executions set finished_at = $5 where id = $6`,
      [key, runId, step, value, Date.now(), executionId],
    );
  }

  /** Records the end of an execution that applies no effect (a read, a model call). */
  async finishExecution(executionId: number): Promise<void> {
    await this.pool.query(`update ${this.schema}.executions set finished_at = $1 where id = $2`, [
      Date.now(),
      executionId,
    ]);
  }

  /** Processes with an activity started and not finished (dead ones included: filter by liveness). */
  async busyPids(): Promise<Set<number>> {
    const { rows } = await this.pool.query(
      `select distinct pid from ${this.schema}.executions where finished_at is null`,
    );
    return new Set(rows.map((r: Record<string, unknown>) => Number(r.pid)));
  }

  async executions(): Promise<ExecutionRow[]> {
    const { rows } = await this.pool.query(
      `select key, run_id, step, pid, started_at, finished_at from ${this.schema}.executions order by id`,
    );
    return rows.map((r: Record<string, unknown>) => ({
      key: String(r.key),
      runId: String(r.run_id),
      step: Number(r.step),
      pid: Number(r.pid),
      startedAt: Number(r.started_at),
      finishedAt: r.finished_at === null ? null : Number(r.finished_at),
    }));
  }

  async effects(): Promise<EffectRow[]> {
    const { rows } = await this.pool.query(
      `select key, run_id, step, value, repeats from ${this.schema}.effects order by key`,
    );
    return rows.map((r: Record<string, unknown>) => ({
      key: String(r.key),
      runId: String(r.run_id),
      step: Number(r.step),
      value: Number(r.value),
      repeats: Number(r.repeats),
    }));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

let shared: Ledger | undefined;

/**
 * The ledger of this worker process, as the crash suite's worker environment names it
 * (BATON_LEDGER_URL, BATON_LEDGER_SCHEMA): for the activities of the suite's workflow modules.
 */
export function workerLedger(): Ledger {
  if (shared === undefined) {
    const url = process.env[LEDGER_URL_ENV];
    const schema = process.env[LEDGER_SCHEMA_ENV];
    if (!url || !schema) throw new Error(`${LEDGER_URL_ENV} and ${LEDGER_SCHEMA_ENV} must be set`);
    shared = new Ledger(url, schema);
  }
  return shared;
}
