/**
 * `client.query`: asks a run's query handler (`ctx.onQuery`) for its answer (docs/queries.md),
 * through the store's query mailbox (`store.queries`):
 * 1. the run's holder, named by its lease, answers from the run's state in memory;
 * 2. when the run has no holder (suspended, paused, finished), or its holder says it no longer
 *    holds it, or does not answer within HOLDER_WAIT_MS (frozen, overloaded), any worker that
 *    registers the run's workflow version claims the query and answers by replaying the run's
 *    journal, writing nothing;
 * 3. no answer by the deadline is QueryTimeoutError.
 *
 * Invariants:
 * 1. Every ask ends by the caller's deadline: the holder gets part of it, the fallback the rest.
 * 2. A query changes nothing: it is never journaled, and the worker's handler runs read-only.
 * 3. Arguments and answers cross the store sealed when the client seals values (its payload
 *    protection), bound to the run and to their purpose.
 */
import { randomUUID } from 'node:crypto';
import {
  BatonError,
  ConfigError,
  defineQuery,
  type QueryDefinition,
  type SerializedError,
} from '@baton/core';
import {
  assertRunId,
  type QueryReply,
  type QueryRequest,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import { openValue, sealValue, type PayloadProtection } from '@baton/core/runtime';
import { notKnownError } from './run-lookup.js';

/** Options of `client.query`. */
export interface QueryCallOptions {
  /**
   * How long to wait for the answer, in all (from 1 ms to 10 minutes): QueryTimeoutError after it.
   * @defaultValue 10_000
   */
  timeoutMs?: number;
}

/** The arguments after the query: its args (optional when the query takes none), then the options. */
export type QueryArguments<Args> = [Args] extends [void]
  ? [args?: undefined, options?: QueryCallOptions]
  : [args: Args, options?: QueryCallOptions];

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 10 * 60_000;
/**
 * How long the holder has to answer before any worker is asked: a holder answers from memory in
 * milliseconds, so one that has not answered in this time is frozen, overloaded or gone, and a
 * replay is the faster answer. Never more than half the caller's timeout, so the fallback has time.
 */
const HOLDER_WAIT_MS = 2_000;

/** The run has no handler for the query: names the query, the run and the names it registers. */
export class UnknownQueryError extends BatonError {
  constructor(
    readonly runId: string,
    readonly query: string,
    /** The query names the run registers (`ctx.onQuery`), sorted. */
    readonly registered: readonly string[],
  ) {
    super(
      'BATON_UNKNOWN_QUERY',
      `run ${runId} has no handler for query '${query}': ` +
        (registered.length === 0
          ? 'it registers none (ctx.onQuery) where its code has reached'
          : `it registers ${registered.map((n) => `'${n}'`).join(', ')}`),
    );
  }
}

/**
 * The run's query handler failed: it threw, called a ctx method (QueryReadOnlyError: a handler
 * only reads), returned a promise or an answer with no JSON form, or the run's replay could not
 * reach its journal's end. `failure` is the worker's error as it was serialized.
 */
export class QueryFailedError extends BatonError {
  constructor(
    readonly runId: string,
    readonly query: string,
    readonly failure: SerializedError,
  ) {
    super(
      'BATON_QUERY_FAILED',
      `query '${query}' of run ${runId} failed: ${failure.name}: ${failure.message}`,
    );
  }
}

/** No worker answered the query in time (none that registers the run's workflow version, or none listening). */
export class QueryTimeoutError extends BatonError {
  constructor(
    readonly runId: string,
    readonly query: string,
    readonly timeoutMs: number,
    detail: string,
  ) {
    super(
      'BATON_QUERY_TIMEOUT',
      `query '${query}' of run ${runId} was not answered within ${timeoutMs} ms: ${detail}`,
      { retryable: true },
    );
  }
}

/** What asking uses of the client. */
export interface QueryDeps {
  store: Store;
  transport: Transport;
  protection: PayloadProtection;
}

/**
 * What is asked to learn the names a run registers: no query can have it (defineQuery refuses it),
 * so every run answers `unknown-query` with its names, by the path every query takes.
 */
const NAMES = '*';

/** The query names run `runId` registers where its code has reached (ctx.onQuery), sorted. */
export async function listQueryNames(
  deps: QueryDeps,
  runId: string,
  options: QueryCallOptions = {},
): Promise<string[]> {
  try {
    await askQuery(deps, runId, NAMES, undefined, options);
  } catch (err) {
    if (err instanceof UnknownQueryError) return [...err.registered];
    throw err;
  }
  throw new Error(`run ${runId} answered the query '${NAMES}', which no run can register`);
}

/** Asks run `runId`'s query (see the module's steps) and answers the handler's value. */
export async function askQuery(
  deps: QueryDeps,
  runId: string,
  query: string | QueryDefinition<unknown, never>,
  args: unknown,
  options: QueryCallOptions = {},
): Promise<unknown> {
  assertRunId(runId);
  const name = query === NAMES ? NAMES : typeof query === 'string' ? defineQuery(query).name : query?.name;
  if (typeof name !== 'string')
    throw new ConfigError('client.query: give a query definition (defineQuery) or its name');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs >= 1 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new ConfigError(
      `client.query(${runId}, '${name}'): timeoutMs is ${String(timeoutMs)}; give 1 to ${MAX_TIMEOUT_MS} ms`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  const { store, protection } = deps;
  const run = await store.runs.get(runId);
  if (run === undefined)
    throw await notKnownError(store, deps.transport, runId, `client.query(${runId}, '${name}'): `);
  const base = {
    runId,
    workflow: run.workflow,
    version: run.version,
    name,
    ...(args !== undefined && {
      args: sealValue(args, runId, 'query args', protection, `arguments of query '${name}'`),
    }),
  };
  const ask = (to: string | null, waitMs: number) =>
    store.queries.ask(
      { ...base, queryId: randomUUID(), to } satisfies QueryRequest,
      Math.max(1, Math.round(waitMs)),
    );

  const lease = await store.leases.get(runId);
  let heldBy: string | undefined;
  if (lease?.state === 'held' && lease.owner !== null) {
    heldBy = lease.owner;
    const held = await ask(heldBy, Math.min(HOLDER_WAIT_MS, timeoutMs / 2));
    if (held.status !== 'not-held' && held.status !== 'unanswered')
      return settle(held, runId, name, protection);
  }
  const left = deadline - Date.now();
  const anyone = left >= 1 ? await ask(null, left) : ({ status: 'unanswered', heard: true } as const);
  if (anyone.status !== 'unanswered' && anyone.status !== 'not-held')
    return settle(anyone, runId, name, protection);
  const heard = anyone.status === 'not-held' || anyone.heard;
  throw new QueryTimeoutError(
    runId,
    name,
    timeoutMs,
    (heldBy === undefined ? '' : `its holder ${heldBy} did not answer, and `) +
      (heard
        ? `no worker that registers ${run.workflow}@${run.version} answered by replaying it; ` +
          'check that one runs (client.fleet.workers()), or give the query longer'
        : `no worker listens for queries; start one that registers ${run.workflow}@${run.version}`),
  );
}

/** The handler's answer, opened; the failure of any other reply. */
function settle(
  reply: Exclude<QueryReply, { status: 'not-held' }>,
  runId: string,
  name: string,
  protection: PayloadProtection,
): unknown {
  switch (reply.status) {
    case 'answered':
      return openValue(
        reply.result,
        runId,
        'query result',
        protection,
        `answer of query '${name}' of run ${runId}`,
      );
    case 'unknown-query':
      throw new UnknownQueryError(runId, name, reply.registered);
    case 'failed':
      throw new QueryFailedError(runId, name, reply.error);
  }
}
