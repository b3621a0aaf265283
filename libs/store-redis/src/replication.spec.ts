import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { BackendNotDurableError } from '@baton/core/adapter';
import type { StoreConnection } from './connection.js';
import { confirmReplicated, REPLICATED_OPERATIONS } from './replication.js';

const GUARD = { waitReplicas: 1, waitTimeoutMs: 250, displayUrl: 'redis+sentinel://h:26379/baton' };

/** A connection whose WAIT answers `acknowledged` and whose generation moves to `after` meanwhile. */
function connection(acknowledged: number, before: number, after: number) {
  let generation = before;
  const sent: unknown[][] = [];
  const redis = {
    call: (...args: unknown[]) => {
      sent.push(args);
      generation = after;
      return Promise.resolve(acknowledged);
    },
  } as unknown as Redis;
  const conn: StoreConnection = {
    redis,
    generation: () => generation,
    open: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return { conn, sent };
}

describe('the replication guard', () => {
  it('sends WAIT with the configured replicas and timeout, and passes when enough replicas confirmed', async () => {
    const { conn, sent } = connection(1, 3, 3);
    await confirmReplicated(conn, GUARD, 'leases.acquire', 3);
    expect(sent).toEqual([['WAIT', 1, 250]]);
  });

  it('fails, retryable and naming the operation, the count and the fix, when too few replicas confirmed', async () => {
    const { conn } = connection(0, 3, 3);
    const err = await confirmReplicated(conn, GUARD, 'runs.finish', 3).catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'RedisReplicationError',
      code: 'BATON_REDIS_NOT_REPLICATED',
      retryable: true,
      backend: 'redis',
    });
    expect(err).toBeInstanceOf(BackendNotDurableError);
    expect((err as Error).message).toContain('runs.finish at redis+sentinel://h:26379/baton');
    expect((err as Error).message).toContain('only 0 of the required 1 replicas confirmed it within 250 ms');
    expect((err as Error).message).toContain('BATON_REDIS_WAIT_REPLICAS');
  });

  it('fails when the WAIT was answered on another connection than the write (a failover in between)', async () => {
    const { conn } = connection(1, 3, 4);
    const err = await confirmReplicated(conn, GUARD, 'checkpoints.write', 3).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BATON_REDIS_NOT_REPLICATED', retryable: true });
    expect((err as Error).message).toContain('the connection was re-established');
  });

  it('guards the writes that move a run, and leaves renewals, releases and timer claims alone', () => {
    for (const op of [
      'leases.acquire',
      'runs.createAndLease',
      'checkpoints.write',
      'runs.finish',
      'leases.suspend',
      'signals.deliver',
      'payloads.put',
      'journalIndex.appendPointers',
    ])
      expect(REPLICATED_OPERATIONS.has(op), op).toBe(true);
    for (const op of [
      'leases.renew',
      'leases.release',
      'timers.claimDue',
      'fleet.report',
      'runs.get',
      'journalIndex.readPointers',
    ])
      expect(REPLICATED_OPERATIONS.has(op), op).toBe(false);
  });
});
