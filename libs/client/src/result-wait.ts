/**
 * Waiting for a run's result (`client.result`, `handle.result`): polls the store with backoff,
 * follows a run that continued as new to its successor, waits out a store that is briefly away,
 * and tells a run that is unknown, deleted, or lost with the store's data apart from one still
 * running. Kept apart from the client, whose root only wires it to the store and its settings.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError, CancelledError, NotFoundError } from '@baton/core';
import type { RecordedDataLoss, RunRecord, Store, Transport } from '@baton/core/adapter';
import { CONTINUED_AS, isContinuedAsNew, openResult, type PayloadProtection } from '@baton/core/runtime';
import { RunDeletedError, RunLostError, TimeoutError, WorkflowFailedError } from './result-errors.js';
import type { ResultOptions } from './run-handle.js';
import { notKnownError } from './run-lookup.js';
import { openedError } from './sealed-records.js';

/** The client's timings that a wait for a result follows. */
export interface ResultTiming {
  /** The first poll's interval; doubled after each poll, up to 250 ms. */
  pollIntervalMs: number;
  /** How long a run the store does not know is waited for, unless the call gives its own. */
  unknownRunMs: number;
  /** How long a store that answers "unavailable, retry" is waited out. */
  retryUnavailableMs: number;
}

/** What a wait reads: the store, the transport (to tell an unknown run's start from none) and keys. */
export interface ResultSources extends ResultTiming {
  store: Store;
  transport: Transport;
  protection: PayloadProtection;
}

/**
 * Waits for the run to finish and returns its result (opened with the client's keys), or throws
 * what ended it; see `Client.result` for every outcome.
 */
export async function waitForResult(
  {
    store,
    transport,
    protection,
    pollIntervalMs,
    unknownRunMs: clientUnknownRunMs,
    retryUnavailableMs,
  }: ResultSources,
  runId: string,
  options: ResultOptions,
): Promise<unknown> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  const unknownRunMs = options.unknownRunMs ?? clientUnknownRunMs;
  let unknownDeadline = Date.now() + unknownRunMs;
  let interval = pollIntervalMs;
  let current = runId;
  /** The status the current run was last seen with: a run seen and then gone was lost. */
  let seen: string | undefined;
  /** Whether a recorded data loss was looked for, for the current run; the loss after its start. */
  let lossRead = false;
  let lostWith: RecordedDataLoss | undefined;
  /** Since when the store's reads fail with a retryable error (undefined while they work). */
  let failingSince: number | undefined;
  for (;;) {
    options.signal?.throwIfAborted();
    let run: RunRecord | undefined;
    try {
      run = await store.runs.get(current);
      failingSince = undefined;
    } catch (err) {
      // A store that is briefly away (a restart, a failover) is waited out for as long as the
      // client retries its other calls (retryUnavailableMs).
      if (!(err instanceof BatonError && err.retryable)) throw err;
      failingSince ??= Date.now();
      const outage = Date.now() - failingSince;
      if (outage >= retryUnavailableMs || Date.now() >= deadline) throw err;
      await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
      continue;
    }
    if (run?.status === 'completed') {
      // A sealed result opens with the client's keys; without the key it names, MissingKeyError.
      if (!isContinuedAsNew(run.result)) return openResult(run.result, current, protection);
      // The run continued as new: wait for its successor (started before this run was recorded
      // as ended), and so on to the chain's last run.
      current = run.result[CONTINUED_AS].runId;
      unknownDeadline = Date.now() + unknownRunMs;
      interval = pollIntervalMs;
      seen = undefined;
      lossRead = false;
      continue;
    }
    if (run !== undefined) seen = run.status;
    // Without the key a sealed error keeps its name and code, and says "protected (key k1)".
    const error = run === undefined ? undefined : openedError(run, protection);
    if (run?.status === 'failed')
      throw new WorkflowFailedError(current, error ?? { name: 'Error', message: 'unknown' });
    if (run?.status === 'cancelled') throw new CancelledError(current, error?.message);
    if (run === undefined) {
      const tombstone = await store.retention.tombstone(current);
      if (tombstone !== undefined) throw new RunDeletedError(current, tombstone.deletedAt);
      if (seen !== undefined) {
        throw await notKnownError(
          store,
          transport,
          current,
          '',
          `it was ${seen} when last read, and then gone`,
        );
      }
      if (!lossRead && current === runId && options.startedAt !== undefined) {
        // A loss after the start was sent: the run most likely went with it, unless its start
        // still waits in the queue. Wait the client's unknownRunMs for that, not for ever.
        lossRead = true;
        const loss = await store.lastDataLoss?.().catch(() => undefined);
        if (loss !== undefined && loss.at >= options.startedAt) {
          lostWith = loss;
          unknownDeadline = Math.min(unknownDeadline, Date.now() + clientUnknownRunMs);
        }
      }
      if (lostWith !== undefined && Date.now() >= unknownDeadline) {
        const sent = new Date(options.startedAt!).toISOString();
        throw new RunLostError(
          current,
          `its start was sent at ${sent}, before the loss, and no worker recorded it in the ${clientUnknownRunMs} ms since`,
          lostWith,
        );
      }
      if (Date.now() >= unknownDeadline && unknownDeadline < deadline) {
        throw new NotFoundError(
          `run ${current} is not known to the store after ${unknownRunMs} ms: it was never started, ` +
            'was deleted (client.runs.delete, or retention longer ago than the tombstones live), or its ' +
            'start message still waits in the queue; pass { unknownRunMs } to wait longer',
        );
      }
    }
    if (Date.now() >= deadline) {
      throw new TimeoutError(
        `run ${current} did not finish within ${options.timeoutMs} ms (status: ${run?.status ?? 'not started'})`,
      );
    }
    const until = Math.min(deadline, run === undefined ? unknownDeadline : Infinity);
    await sleep(Math.min(interval, Math.max(0, until - Date.now())));
    interval = Math.min(interval * 2, 250);
  }
}
