/**
 * Queries to runs (`store.queries`, {@link QueryMailbox}): how `client.query` reaches the worker
 * that answers it. Part of the store contract (store.ts); the conformance suite's `query mailbox`
 * section checks it.
 *
 * On the store, not the bus, because every worker and every operator client already holds a store
 * connection, and because NATS, Kafka and the Redis bus share no request-and-reply primitive: one
 * mailbox serves every bus. A request is posted either to one worker (the holder of the run's
 * lease, which answers from the run's state in memory) or to any worker (one that registers the
 * run's workflow version claims it and answers by replaying the run's journal); see
 * docs/queries.md and docs/architecture.md, "Queries".
 *
 * Left out on purpose: durability. A request and its reply live for the asker's timeout only; a
 * request no worker heard (a channel down, no worker up) goes unanswered, and the asker decides
 * what to do (the client falls back from the holder to any worker, then gives up with a timeout).
 */
import type { SerializedError } from '../../shared/errors.js';
import { ConfigError } from '../../shared/errors.js';

/** A query to a run, as the asker posts it and a worker claims it. */
export interface QueryRequest {
  /** Unique per ask, made by the asker (a random UUID): what a reply and a claim name. */
  queryId: string;
  runId: string;
  /** The run's workflow and version: a worker that does not register them leaves the request. */
  workflow: string;
  version: number;
  /** The query's name (`defineQuery(name)`). */
  name: string;
  /** The arguments, JSON data (sealed when the fleet seals values); absent for none. */
  args?: unknown;
  /**
   * The worker asked (the run's lease holder, which answers from memory), or null for any worker
   * that registers `workflow@version` (which answers by replaying the journal).
   */
  to: string | null;
}

/**
 * A worker's reply: the handler's answer (sealed when the fleet seals values), the handler's
 * failure (a ctx call refused inside it, a throw, a promise or an answer with no JSON form), no
 * handler of that name (with the names the run registers), or, from a worker asked by name, that it
 * does not hold the run (its lease moved on, the run suspended meanwhile).
 */
export type QueryReply =
  | { status: 'answered'; result: unknown }
  | { status: 'failed'; error: SerializedError }
  | { status: 'unknown-query'; registered: string[] }
  | { status: 'not-held' };

/**
 * What an ask ended with: the reply, or none in time. `heard` is false when the store knows that no
 * worker was listening where the request was posted (the asker need not wait), true otherwise
 * (some store cannot tell).
 */
export type QueryAskResult = QueryReply | { status: 'unanswered'; heard: boolean };

/** The longest an ask may wait: an answer is a read of a run's state, not a job. */
export const MAX_QUERY_TIMEOUT_MS = 10 * 60_000;

/**
 * A mailbox for queries, with a notification on post and on reply, so neither side polls.
 *
 * Invariants every store keeps:
 * 1. A posted request is claimed by at most one worker; a claim after the ask ended (answered or
 *    timed out) gets nothing, so no worker replays a run for an asker that left.
 * 2. A reply reaches only the ask that posted its request, once; a reply to an ask that ended is
 *    dropped.
 * 3. Nothing outlives its ask by more than a short margin: requests, claims and replies expire on
 *    the store (keys with a time to live, rows swept by later asks).
 */
export interface QueryMailbox {
  /**
   * The asker's side: posts `request` and waits up to `timeoutMs` for its reply (or, without one,
   * answers `unanswered`). The request is withdrawn when the ask ends either way.
   */
  ask(request: QueryRequest, timeoutMs: number): Promise<QueryAskResult>;
  /**
   * The worker's side: calls `listener` with each request posted to `workerId`, and with each one
   * posted to any worker, without its `args` (which {@link claim} returns). Best effort, like every
   * notification: a request missed while the channel is down goes unanswered, and its asker times
   * out. A listener that throws is ignored. Returns a function that stops the calls.
   */
  listen(workerId: string, listener: (request: Omit<QueryRequest, 'args'>) => void): () => void;
  /**
   * Takes the request `queryId` to answer it: the whole request for exactly one caller, undefined
   * for every other, and for a request withdrawn or expired (invariant 1).
   */
  claim(queryId: string, workerId: string): Promise<QueryRequest | undefined>;
  /** Posts the reply to a request this worker claimed; dropped when its ask has ended (invariant 2). */
  answer(queryId: string, reply: QueryReply): Promise<void>;
}

/**
 * The checks of an ask, made once in core before it reaches a store (checked-store.ts): a query id
 * and run id of one token, a name, a version, and a timeout from 1 ms to {@link MAX_QUERY_TIMEOUT_MS}.
 */
export function checkQueryAsk(request: QueryRequest, timeoutMs: number): void {
  const token = (field: string, value: unknown): void => {
    if (typeof value !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(value)) {
      throw new ConfigError(
        `queries.ask: ${field} must be 1-256 printable characters without spaces, got ${JSON.stringify(value) ?? String(value)}`,
        { option: field, value: String(value) },
      );
    }
  };
  token('queryId', request?.queryId);
  token('runId', request.runId);
  token('workflow', request.workflow);
  token('name', request.name);
  if (request.to !== null) token('to', request.to);
  if (!Number.isSafeInteger(request.version) || request.version < 1) {
    throw new ConfigError(`queries.ask: version must be a whole number ≥ 1, got ${String(request.version)}`, {
      option: 'version',
      value: String(request.version),
    });
  }
  if (!(Number.isFinite(timeoutMs) && timeoutMs >= 1 && timeoutMs <= MAX_QUERY_TIMEOUT_MS)) {
    throw new ConfigError(
      `queries.ask: timeoutMs must be from 1 to ${MAX_QUERY_TIMEOUT_MS} ms, got ${String(timeoutMs)}`,
      { option: 'timeoutMs', value: String(timeoutMs), expected: `from 1 to ${MAX_QUERY_TIMEOUT_MS} ms` },
    );
  }
}
