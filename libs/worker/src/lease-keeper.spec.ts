import type { LeaseLostError } from '@baton/core/runtime';
import { describe, expect, it } from 'vitest';

import type { LeaseStore, RenewResult } from '@baton/core/adapter';
import { memoryStore } from '@baton/core/memory';
import { LeaseKeeper } from './lease-keeper.js';
import { silentLogger } from './logger.js';
import { describeLeaseRefusals } from './lease-refusals.spec-helper.js';

function fakeStore(renew: LeaseStore['renew']): LeaseStore {
  return { renew } as LeaseStore;
}

describe('LeaseKeeper', () => {
  it('renews every held lease in one batched call per heartbeat', async () => {
    const batches: string[][] = [];
    const keeper = new LeaseKeeper(
      fakeStore(async (requests) => {
        batches.push(requests.map((r) => r.runId));
        return requests.map((r): RenewResult => ({ runId: r.runId, ok: true, cancelRequested: false }));
      }),
      300,
      50,
      silentLogger,
    );
    const handlers = { onLost: () => undefined, onCancelRequested: () => undefined };
    keeper.add('a', 1, Date.now(), handlers);
    keeper.add('b', 4, Date.now(), handlers);
    keeper.start();
    await new Promise((r) => setTimeout(r, 130));
    keeper.stop();
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(batches.every((b) => b.length === 2 && b.includes('a') && b.includes('b'))).toBe(true);
  });

  it('reports a lease lost when the store refuses it, and a cancel when the store flags one', async () => {
    const lost: string[] = [];
    let cancels = 0;
    const keeper = new LeaseKeeper(
      fakeStore(async (requests) =>
        requests.map((r) => ({
          runId: r.runId,
          ok: r.runId !== 'gone',
          cancelRequested: r.runId === 'stop-me',
        })),
      ),
      300,
      50,
      silentLogger,
    );
    keeper.add('gone', 1, Date.now(), {
      onLost: (e: LeaseLostError) => lost.push(e.runId),
      onCancelRequested: () => undefined,
    });
    keeper.add('stop-me', 1, Date.now(), { onLost: () => undefined, onCancelRequested: () => cancels++ });
    keeper.start();
    await new Promise((r) => setTimeout(r, 80));
    keeper.stop();
    expect(lost).toEqual(['gone']);
    expect(cancels).toBeGreaterThanOrEqual(1);
    expect(keeper.size).toBe(1);
  });

  it('gives a lease up locally when no renewal is confirmed in time, even if the store call hangs', async () => {
    const lostAt: number[] = [];
    const keeper = new LeaseKeeper(
      fakeStore(() => new Promise(() => undefined)),
      300,
      50,
      silentLogger,
    );
    const start = Date.now();
    keeper.add('r', 1, start, {
      onLost: () => lostAt.push(Date.now() - start),
      onCancelRequested: () => undefined,
    });
    keeper.start();
    await new Promise((r) => setTimeout(r, 450));
    keeper.stop();
    expect(lostAt).toHaveLength(1);
    // Nominally at 250 ms (one heartbeat before the 300 ms lease ends); never before the lease
    // could still be renewed in time.
    expect(lostAt[0]).toBeGreaterThanOrEqual(200);
  });
});

describeLeaseRefusals('memory', async () => memoryStore());
