/**
 * What a refused renewal means, on a given store: the cases the lease keeper must tell apart so
 * that only a lease that really left the session is reported lost (issue 17, item 7a). Called by
 * the memory spec and by a real store's integration spec.
 */
import type { LeaseLostError } from '@baton/core/runtime';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';

import type { Store } from '@baton/core/adapter';
import { LeaseKeeper } from './lease-keeper.js';
import { withCapability } from './capabilities.spec-helper.js';
import { silentLogger, type Logger } from './logger.js';

const LEASE_MS = 600;
const HEARTBEAT_MS = 40;

interface Watched {
  keeper: LeaseKeeper;
  lost: LeaseLostError[];
  debug: string[];
}

/** A keeper on `store` that records what it reports; stopped after each test. */
function watch(store: Store, keepers: LeaseKeeper[]): Watched {
  const debug: string[] = [];
  const logger: Logger = { ...silentLogger, debug: (_obj, msg) => debug.push(msg ?? '') };
  const keeper = new LeaseKeeper(store.leases, LEASE_MS, HEARTBEAT_MS, logger);
  keepers.push(keeper);
  return { keeper, lost: [], debug };
}

/** Waits (bounded) until a renewal round ends after `since` (local time). */
async function passAfter(keeper: LeaseKeeper, since: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (keeper.lastPass < since) {
    if (Date.now() > deadline) throw new Error('no renewal round ended within 5 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits (bounded) until the keeper holds no lease and the round that dropped the last one ended. */
async function settled(keeper: LeaseKeeper): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (keeper.size > 0) {
    if (Date.now() > deadline) throw new Error(`the keeper still holds ${keeper.size} lease(s) after 5 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await passAfter(keeper, Date.now());
}

async function newRun(
  store: Store,
  owner: string,
  ttlMs = LEASE_MS,
): Promise<{ runId: string; epoch: number }> {
  const runId = `refusal-${randomUUID()}`;
  await store.runs.create({ runId, workflow: 'w', version: 1, input: null, idempotencyKey: null });
  const lease = await store.leases.acquire(runId, owner, ttlMs);
  if (!lease.ok) throw new Error(`could not lease ${runId}`);
  return { runId, epoch: lease.epoch };
}

export function describeLeaseRefusals(name: string, makeStore: () => Promise<Store>): void {
  describe(`LeaseKeeper refusals on ${name}`, () => {
    const keepers: LeaseKeeper[] = [];
    afterEach(() => {
      for (const keeper of keepers.splice(0)) keeper.stop();
    });

    function hold(w: Watched, runId: string, epoch: number): void {
      w.keeper.add(runId, epoch, Date.now(), {
        onLost: (error) => w.lost.push(error),
        onCancelRequested: () => undefined,
      });
    }

    it('does not report a loss when the renewal lands after the run finished at its epoch', async () => {
      const store = await makeStore();
      const w = watch(store, keepers);
      const { runId, epoch } = await newRun(store, 'worker-a');
      // The session's finish lands before the renewal that was already on its way.
      await store.runs.finish(runId, epoch, { status: 'completed', result: 1 });
      hold(w, runId, epoch);
      w.keeper.start();
      await settled(w.keeper);
      expect(w.lost).toEqual([]);
      expect(w.debug).toContain('renewal refused after the run ended at this epoch; not a lease loss');
    });

    it('does not report a loss when the run was suspended at its epoch', async () => {
      const store = await makeStore();
      const w = watch(store, keepers);
      const { runId, epoch } = await newRun(store, 'worker-a');
      const suspended = await store.leases.suspend({
        runId,
        epoch,
        wakeAt: null,
        signals: ['go'],
        consumedSignalIds: [],
      });
      expect(suspended.ok).toBe(true);
      hold(w, runId, epoch);
      w.keeper.start();
      await settled(w.keeper);
      expect(w.lost).toEqual([]);
    });

    it('reports a loss naming the new epoch when another worker took the run over', async () => {
      const store = await makeStore();
      const w = watch(store, keepers);
      const { runId, epoch } = await newRun(store, 'worker-a', 1);
      await new Promise((r) => setTimeout(r, 20));
      const taken = await store.leases.acquire(runId, 'worker-b', LEASE_MS);
      expect(taken).toMatchObject({ ok: true, epoch: epoch + 1 });
      hold(w, runId, epoch);
      w.keeper.start();
      await settled(w.keeper);
      expect(w.lost.map((e) => [e.code, e.runId, e.epoch])).toEqual([['BATON_LEASE_LOST', runId, epoch]]);
      expect(w.lost[0]!.message).toContain(`epoch ${epoch + 1} now holds the run`);
    });

    it('reports a loss when the lease ran out and was reaped at its epoch', async () => {
      const store = await makeStore();
      const w = watch(store, keepers);
      const { runId, epoch } = await newRun(store, 'worker-a', 1);
      await new Promise((r) => setTimeout(r, 20));
      expect(await store.leases.reapExpired(100, 60_000)).toContain(runId);
      hold(w, runId, epoch);
      w.keeper.start();
      await settled(w.keeper);
      expect(w.lost).toHaveLength(1);
      expect(w.lost[0]!.message).toContain('the lease ran out before it was renewed');
    });

    it('applies a refusal only to the epoch it was sent for', async () => {
      const store = await makeStore();
      const { runId, epoch } = await newRun(store, 'worker-a', 1);
      const laterLost: LeaseLostError[] = [];
      const slot: { keeper?: LeaseKeeper } = {};
      let swapped = false;
      // While the renewal of the first epoch is on its way, this worker claims the run again: the
      // refusal that comes back belongs to the first claim, not to the second.
      const racing = withCapability(store, 'leases', {
        renew: async (...args: Parameters<Store['leases']['renew']>) => {
          const answer = await store.leases.renew(...args);
          if (!swapped) {
            swapped = true;
            const again = await store.leases.acquire(runId, 'worker-a', LEASE_MS);
            if (!again.ok) throw new Error('the second claim failed');
            slot.keeper!.remove(runId);
            slot.keeper!.add(runId, again.epoch, Date.now(), {
              onLost: (error) => laterLost.push(error),
              onCancelRequested: () => undefined,
            });
          }
          return answer;
        },
      });
      const w = watch(racing, keepers);
      slot.keeper = w.keeper;
      await new Promise((r) => setTimeout(r, 20));
      hold(w, runId, epoch);
      w.keeper.start();
      const deadline = Date.now() + 5_000;
      while (!swapped && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(swapped).toBe(true);
      // Two more rounds: the second claim's lease is renewed, and nothing was reported lost.
      await passAfter(w.keeper, Date.now());
      await passAfter(w.keeper, Date.now());
      expect(w.lost).toEqual([]);
      expect(laterLost).toEqual([]);
      expect(w.keeper.size).toBe(1);
      expect(await store.leases.get(runId)).toMatchObject({
        epoch: epoch + 1,
        owner: 'worker-a',
        state: 'held',
      });
    });
  });
}
