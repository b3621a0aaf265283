/**
 * The guard against asynchronous replication on the bus: with `waitReplicas` above 0, a journal
 * append, a group record and a dead letter are reported done only once that many replicas have
 * them (`WAIT <waitReplicas> <waitTimeoutMs>` after the write, on the same connection).
 *
 * Why: Redis acknowledges a write before any replica has it. If the primary dies in between and a
 * replica that never received it is promoted, a step the worker journaled, and went on from, is
 * gone: it runs again after the failover, and a store on another server (Postgres) may hold a
 * checkpoint whose journal position the bus no longer has. With the guard at the number of
 * replicas, every replica a failover can promote has every record a worker went on from, as a
 * JetStream R3 stream or Kafka with `acks=all` give.
 *
 * When the replicas do not confirm in time the operation fails with a retryable
 * BackendNotDurableError (BATON_REDIS_TRANSPORT_NOT_REPLICATED) and its caller does not go on: a journal append is retried with
 * its token (the script answers the record already written, journal.ts) and the WAIT asked again;
 * after its attempts the run stops on this worker and resumes once its lease expires.
 *
 * Left alone: enqueues, acks and naks, on BullMQ's connections (a lost ack redelivers, harmless; a
 * lost start message is started again with the same idempotency key by its producer, which
 * starts nothing twice).
 */
import { notReplicated } from './errors.js';
import type { CommandConnection } from './connection.js';

export interface ReplicationGuard {
  waitReplicas: number;
  waitTimeoutMs: number;
  displayUrl: string;
}

/**
 * Waits until `waitReplicas` replicas have every write the connection made so far. `written` is
 * the connection's generation when the write was answered: a WAIT answered on a later connection
 * (a reconnect in between) says nothing about that write, so it fails too.
 */
export async function confirmReplicated(
  connection: CommandConnection,
  guard: ReplicationGuard,
  operation: string,
  written: number,
): Promise<void> {
  if (guard.waitReplicas === 0) return;
  const acknowledged = Number(await connection.redis.call('WAIT', guard.waitReplicas, guard.waitTimeoutMs));
  if (connection.generation() !== written) {
    throw notReplicated(
      `redis transport: ${operation} on ${guard.displayUrl}: the connection was re-established (a failover?) between the write and its replication check, so the write may be lost; it is retried`,
    );
  }
  if (acknowledged < guard.waitReplicas) {
    throw notReplicated(
      `redis transport: ${operation} on ${guard.displayUrl}: the primary applied the write but only ${acknowledged} of the required ${guard.waitReplicas} replicas confirmed it within ${guard.waitTimeoutMs} ms, so a failover now could lose it; check the replicas (INFO replication on the primary), or lower BATON_REDIS_BUS_WAIT_REPLICAS / raise BATON_REDIS_BUS_WAIT_TIMEOUT_MS`,
    );
  }
}
