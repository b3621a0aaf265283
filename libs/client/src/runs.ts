/**
 * Runs as an operator finds and steers them (`client.runs`): list, page through and count them,
 * a run's children and timeline, pause and resume one, delete a finished one. The CLI's
 * `baton runs …`, the console and applications share this one API and its errors. Starting,
 * signalling, cancelling, describing and waiting are the producer's calls, on the client itself.
 */
import { ConfigError, NotFoundError, RunStateError } from '@baton/core';
import {
  assertRunId,
  type ListedRun,
  type PayloadStore,
  type RunCounts,
  type RunFilter,
  type RunPage,
  type RunQuery,
  type RunRecord,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import { childKeyPrefix, childSignalName, parentOfKey, wakeMessage } from '@baton/core/runtime';
import { countedAttribute } from './attribute-filter.js';
import type { HistoryReader } from './history.js';
import type { Outbox } from './outbox.js';
import { deleteFinishedRun, type RunDeletion } from './run-deletion.js';
import { requireRun } from './run-lookup.js';
import { buildTimeline, type RunTimeline } from './timeline.js';

/**
 * The signal name every durable promise's completion is delivered under (core's PROMISE_SIGNAL,
 * which no door offers; the console's http-api.spec.ts checks a real promise's wait reads as one).
 */
const PROMISE_SIGNAL_NAME = 'baton.promise';

/** One thing a run waits for ({@link RunsApi.waits}). */
export type RunWait =
  | { kind: 'signal'; name: string }
  /** A durable promise (`ctx.promise`): any of its pending ones completing wakes it. */
  | { kind: 'promise' }
  /** The end of a child run it started. */
  | { kind: 'child'; runId: string }
  /** Its timer: a sleep, or a wait's timeout (store clock, ms). */
  | { kind: 'timer'; at: number }
  /** An operator's pause; nothing wakes it but a resume. */
  | { kind: 'pause'; reason?: string };

export class RunsApi {
  constructor(
    private readonly store: (method: string) => Store,
    private readonly transport: Transport,
    private readonly connect: () => Promise<void>,
    private readonly outbox: Outbox,
    private readonly history: HistoryReader,
    /** Where large values are stored, so a deleted run's go with it. */
    private readonly payloads: PayloadStore | undefined,
  ) {}

  /**
   * One page of the runs the query matches, newest first unless `order: 'oldest'`; pass the page's
   * `cursor` (with the same filter and order) for the next. ConfigError names an invalid filter or
   * a cursor from another query.
   */
  list(query: RunQuery = {}): Promise<RunPage> {
    return this.store('runs.list').runs.list(query);
  }

  /** Every run the query matches, page after page (`limit` runs a page). */
  async *all(query: Omit<RunQuery, 'cursor'> = {}): AsyncGenerator<ListedRun> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...query, ...(cursor !== undefined && { cursor }) });
      yield* page.runs;
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  /**
   * How many runs there are, by status and by workflow and status. With a filter of one keyword or
   * boolean search attribute (`{ attributes: { customerId: '42' } }`), the same counts over the
   * runs that hold that value, which the store keeps as runs change (docs/search-attributes.md).
   * ConfigError for any other filter: `client.bulk.count(filter)` counts those by walking the runs.
   */
  async count(filter?: Pick<RunFilter, 'attributes'>): Promise<RunCounts> {
    const given = Object.entries(filter ?? {}).filter(([, value]) => value !== undefined);
    if (given.length === 0) return this.store('runs.count').runs.count();
    const counted = countedAttribute(filter);
    if (given.some(([field]) => field !== 'attributes') || counted === undefined)
      throw new ConfigError(
        'client.runs.count: counts are kept for all runs, or for one keyword or boolean search attribute ' +
          "({ attributes: { customerId: '42' } }); count any other filter with client.bulk.count(filter)",
      );
    return this.store('runs.count').attributes.count(counted.name, counted.attribute);
  }

  /**
   * The child workflows run `runId` started (`ctx.startChild`), oldest first, at most `limit`: the
   * runs whose idempotency key names it as their parent (core's child-workflows.ts, invariant 6).
   * A child whose start is still queued is not listed yet.
   */
  async children(runId: string, limit = 100): Promise<RunRecord[]> {
    const store = this.store('runs.children');
    await this.connect();
    const page = await store.runs.list({
      idempotencyKeyPrefix: childKeyPrefix(runId),
      order: 'oldest',
      limit,
    });
    return page.runs.filter((run) => parentOfKey(run.idempotencyKey)?.runId === runId);
  }

  /**
   * What a run waits for, as the store knows it (no journal read): for a `suspended` run each
   * signal name it waits on (a durable promise and a child's end are signals underneath, told
   * apart here) and its timer; for a `paused` one the pause and its reason. Empty for a run in
   * any other state, and for one the store does not know.
   */
  async waits(runId: string): Promise<RunWait[]> {
    const store = this.store('runs.waits');
    await this.connect();
    const lease = await store.leases.get(runId);
    if (lease?.state === 'paused')
      return [{ kind: 'pause', ...(lease.pauseReason !== undefined && { reason: lease.pauseReason }) }];
    if (lease?.state !== 'suspended' || lease.waitingFor === undefined) return [];
    const waits: RunWait[] = [];
    const childPrefix = childSignalName('');
    let promise = false;
    for (const name of lease.waitingFor.signals) {
      if (name === PROMISE_SIGNAL_NAME) promise = true;
      else if (name.startsWith(childPrefix))
        waits.push({ kind: 'child', runId: name.slice(childPrefix.length) });
      else waits.push({ kind: 'signal', name });
    }
    if (promise) waits.push({ kind: 'promise' });
    if (lease.waitingFor.wakeAt !== null) waits.push({ kind: 'timer', at: lease.waitingFor.wakeAt });
    return waits;
  }

  /**
   * The run's timeline (see {@link RunTimeline}): its activities with attempts, durations,
   * idempotency keys, worker and epoch; its signals, timers, checkpoints, lease changes and
   * failovers, in journal order. NotFoundError when the store does not know the run.
   */
  async timeline(runId: string): Promise<RunTimeline> {
    const store = this.store('runs.timeline');
    await this.connect();
    await requireRun(store, this.transport, runId, 'runs.timeline');
    const checkpoints = await store.checkpoints.list(runId);
    return buildTimeline(runId, await this.history.read(runId), checkpoints);
  }

  /**
   * Pauses a run (docs/operations.md, "Pausing and resuming a run"). A run no worker is running
   * (pending, suspended, between owners) is `paused` at once: `'paused'`. A run a worker is
   * running is asked to stop: it finishes the activities in flight, journals their results, starts
   * nothing new, and pauses at its next step (within a lease heartbeat): `'pause-requested'`
   * (`describe()` shows `lease.pauseRequested` until then). Should that worker die first, the run
   * is paused instead of resumed elsewhere. A paused run is run by no worker, reaper or timer
   * until {@link resume}; signals sent to it are kept. Pausing a paused run changes nothing.
   *
   * Needs the store. NotFoundError for a run the store does not know; RunStateError (naming the
   * status) for a finished run, and for a run whose cancel is pending (a cancel wins).
   */
  async pause(runId: string, reason?: string): Promise<'paused' | 'pause-requested'> {
    const store = this.store('runs.pause');
    assertRunId(runId);
    await this.connect();
    const answer = await this.outbox.retrying(`client.runs.pause(run ${runId})`, () =>
      store.control.requestPause(runId, reason),
    );
    if (!answer.found)
      throw new NotFoundError(
        `client.runs.pause(${runId}): run ${runId} is not known to the store (not started yet?)`,
      );
    if (answer.state === 'paused' || answer.state === 'pause-requested') return answer.state;
    const status = (await store.runs.get(runId))?.status ?? answer.state;
    throw new RunStateError(
      runId,
      status,
      answer.state === 'finished'
        ? `client.runs.pause(${runId}): run ${runId} is ${status}: a finished run cannot be paused`
        : `client.runs.pause(${runId}): run ${runId} has a cancel pending, and a cancel wins over a pause; ` +
            'it ends cancelled',
    );
  }

  /**
   * Resumes a paused run: any worker claims it at once and it goes on from its last journaled
   * step (a sleep that came due while paused wakes it at once). For a run whose pause was requested
   * but not reached yet, withdraws the request. Resolves true when it did either, false when the
   * run was neither paused nor asked to pause (nothing changed).
   *
   * Needs the store. NotFoundError for a run the store does not know; RunStateError for a finished run.
   */
  async resume(runId: string): Promise<boolean> {
    const store = this.store('runs.resume');
    assertRunId(runId);
    await this.connect();
    const operation = `client.runs.resume(run ${runId})`;
    const answer = await this.outbox.retrying(operation, () => store.control.resume(runId));
    if (!answer.found)
      throw new NotFoundError(`client.runs.resume(${runId}): run ${runId} is not known to the store`);
    // Lost, the wake is replaced by the reaper's: the resumed lease is in its queue.
    if (answer.wake) await this.outbox.send(operation, wakeMessage(runId, 'resume'));
    if (answer.resumed) return true;
    const lease = await store.leases.get(runId);
    if (lease?.state === 'finished') {
      const status = (await store.runs.get(runId))?.status ?? 'finished';
      throw new RunStateError(
        runId,
        status,
        `client.runs.resume(${runId}): run ${runId} is ${status}: a finished run cannot be resumed ` +
          '(client.timeTravel.retry redrives a failed one)',
      );
    }
    return false;
  }

  /**
   * Deletes a finished run for good: its store data (record, checkpoints, lease, signals, and its
   * idempotency key, so a later start with that key creates a new run), then its journal: purged
   * on NATS and in memory; on Kafka kept until the journal topic's `retention.ms`
   * (`journal: 'retention'`, docs/retention.md). RunStateError naming the status unless the run
   * is completed, failed or cancelled; NotFoundError when the store does not know it.
   */
  async delete(runId: string): Promise<RunDeletion> {
    const store = this.store('runs.delete');
    assertRunId(runId);
    await this.connect();
    const deleted = await deleteFinishedRun(store, this.transport, runId, this.payloads);
    if (deleted === undefined)
      throw new NotFoundError(`client.runs.delete(${runId}): run ${runId} is not known to the store`);
    return deleted;
  }
}
