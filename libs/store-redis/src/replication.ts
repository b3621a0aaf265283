/**
 * The guard against asynchronous replication: a write that moves a run is reported done only
 * once `waitReplicas` replicas have it (`WAIT <waitReplicas> <waitTimeoutMs>` after it, on the
 * same connection).
 *
 * Why it is needed: Redis acknowledges a write as soon as the primary applied it and streams it
 * to its replicas afterwards. If the primary dies in between and Sentinel promotes a replica
 * that never received it, the write is gone although a worker acted on it:
 * - a lease claim at epoch N+1 vanishes, the promoted replica still says N, and the next claim
 *   there hands out N+1 again: two workers act under the same epoch, and fencing (which compares
 *   epochs) cannot tell them apart;
 * - a new run's record, a checkpoint, a finish, a suspend's timer, a signal in the inbox or a
 *   stored payload vanishes after the worker (or the client) went on as if it were durable.
 *
 * Why it is sufficient: a write the store reported done is on the primary and on at least
 * `waitReplicas` replicas. Sentinel promotes a replica, and among the ones it can reach it picks
 * the one with the largest replication offset; with `waitReplicas` equal to the number of
 * replicas (1 in the recommended topology), every replica it can promote has the write. So an
 * epoch a worker acts under is never handed out again, and nothing a worker or a client was told
 * is durable is lost. With more replicas than `waitReplicas`, a failover that can reach only
 * replicas that lagged can still lose a write: set `waitReplicas` to the number of replicas.
 *
 * What it leaves alone, because losing it costs time, never correctness: lease renewals (a lost
 * renewal makes the lease expire earlier; the next owner's epoch fences the old one), releases
 * (the lease expires instead), timer claims (a timer fires twice; the second wake finds the run
 * moving), worker reports and presence.
 *
 * When the replicas do not confirm in time, the operation fails with a retryable
 * BackendNotDurableError (BATON_REDIS_NOT_REPLICATED): its caller does not act on it (a claim does not ack its message, a
 * finish is retried by whoever resumes the run), and the run is picked up again once the lease
 * expires. A write that Redis applied and WAIT did not confirm may survive or not; either way
 * nobody acted on it.
 */
import { notReplicated } from './errors.js';
import type { StoreConnection } from './connection.js';

/**
 * The store operations followed by WAIT (see above for why these and not the others), named
 * `<capability>.<method>` as the store runs them.
 */
export const REPLICATED_OPERATIONS: ReadonlySet<string> = new Set([
  'leases.acquire',
  'runs.create',
  'runs.createAndLease',
  'checkpoints.write',
  'runs.finish',
  // A continuing run's mark: the worker carries its inbox over once it holds.
  'runs.continueAs',
  'runs.reopen',
  'leases.suspend',
  'signals.deliver',
  'control.requestCancel',
  'control.closeCancels',
  'control.requestPause',
  'control.pauseHeld',
  'control.resume',
  'payloads.put',
  // A request the caller was told is waiting, and an outcome it was told is kept.
  'updates.request',
  'updates.settle',
  // A completion the caller was told of, and the record its token is checked against.
  'promises.create',
  'promises.complete',
  'promises.expire',
  // A run's search attributes: its journal says they are set, and a replay does not set them again.
  'attributes.set',
  // A step of a grouped run is durable once its pointer is (group commit).
  'journalIndex.appendPointers',
  'journalIndex.markOwnJournal',
]);

export interface ReplicationGuard {
  waitReplicas: number;
  waitTimeoutMs: number;
  displayUrl: string;
}

/**
 * Waits until `waitReplicas` replicas have every write this connection made so far. `written` is
 * the connection's generation when the write was answered: a WAIT answered on a later connection
 * (a failover in between) says nothing about that write, so it fails too.
 */
export async function confirmReplicated(
  connection: StoreConnection,
  guard: ReplicationGuard,
  operation: string,
  written: number,
): Promise<void> {
  const acknowledged = Number(await connection.redis.call('WAIT', guard.waitReplicas, guard.waitTimeoutMs));
  if (connection.generation() !== written) {
    throw notReplicated(
      `redis store ${operation} at ${guard.displayUrl}: the connection was re-established (a failover?) ` +
        'between the write and its replication check, so the write may be lost; retry the operation',
    );
  }
  if (acknowledged < guard.waitReplicas) {
    throw notReplicated(
      `redis store ${operation} at ${guard.displayUrl}: the primary applied the write but only ${acknowledged} ` +
        `of the required ${guard.waitReplicas} replicas confirmed it within ${guard.waitTimeoutMs} ms, so a ` +
        'failover now could lose it; check the replicas (INFO replication on the primary), or lower ' +
        'BATON_REDIS_WAIT_REPLICAS / raise BATON_REDIS_WAIT_TIMEOUT_MS',
    );
  }
}
