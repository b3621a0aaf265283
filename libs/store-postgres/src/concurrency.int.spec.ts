import { afterAll, describe, expect, it } from 'vitest';
import type { PresenceStore, Store } from '@baton/core/adapter';
import { postgresStore } from './index.js';
import { TestSchemas, url, waitFor } from './test-support.spec-helper.js';

const schemas = new TestSchemas();
afterAll(() => schemas.dropAll());

const RUNS = 24;
const LONG_TTL_MS = 60_000;

/** Two stores (separate pools) on one fresh schema, as two workers would have. */
async function twoWorkers(
  schema = schemas.name(),
): Promise<[Store & { readonly presence: PresenceStore }, Store & { readonly presence: PresenceStore }]> {
  const a = postgresStore({ url, schema, poolSize: 4 });
  const b = postgresStore({ url, schema, poolSize: 4 });
  await Promise.all([a.connect(), b.connect()]);
  return [a, b];
}

/** Calls `scan` from both stores, twice each, all at once, and returns every reported id. */
async function scanTogether<S extends Store>(
  stores: S[],
  scan: (store: S) => Promise<string[]>,
): Promise<string[]> {
  const results = await Promise.all([...stores, ...stores].map(scan));
  return results.flat();
}

describe('postgres store: concurrent scanners', () => {
  it('never reports an expired lease to two reapers', async () => {
    const [a, b] = await twoWorkers();
    try {
      const runIds = Array.from({ length: RUNS }, (_, i) => `expired-${i}`);
      for (const runId of runIds) await a.leases.acquire(runId, 'gone', 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const reported = await scanTogether([a, b], (s) => s.leases.reapExpired(RUNS / 3, LONG_TTL_MS));
      expect(new Set(reported).size).toBe(reported.length);
      const rest = await a.leases.reapExpired(RUNS, LONG_TTL_MS);
      expect([...reported, ...rest].sort()).toEqual([...runIds].sort());
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('never hands a due timer to two scanners', async () => {
    const [a, b] = await twoWorkers();
    try {
      const now = await a.leases.now();
      const runIds = Array.from({ length: RUNS }, (_, i) => `sleeping-${i}`);
      for (const [i, runId] of runIds.entries()) {
        await a.leases.acquire(runId, 'w', LONG_TTL_MS);
        await a.leases.suspend({ runId, epoch: 1, wakeAt: now - i, signals: [], consumedSignalIds: [] });
      }
      const claimed = await scanTogether([a, b], async (s) =>
        (await s.timers.claimDue(RUNS / 3, LONG_TTL_MS)).map((t) => t.runId),
      );
      expect(new Set(claimed).size).toBe(claimed.length);
      const rest = (await a.timers.claimDue(RUNS, LONG_TTL_MS)).map((t) => t.runId);
      expect([...claimed, ...rest].sort()).toEqual([...runIds].sort());
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("never reports a dead worker's run to two reapers", async () => {
    const [a, b] = await twoWorkers();
    const doomed = postgresStore({
      url,
      schema: (a as unknown as { options: { schema: string } }).options.schema,
    });
    try {
      await doomed.presence.register('doomed');
      const runIds = Array.from({ length: RUNS }, (_, i) => `orphan-${i}`);
      for (const runId of runIds) await a.leases.acquire(runId, 'doomed', LONG_TTL_MS);
      await doomed.close();
      // The lock goes with the session; wait until the server has let go of it.
      await waitFor('the lock to be released', async () => !(await a.presence.live()).includes('doomed'));
      const reported = await scanTogether([a, b], (s) => s.presence.reapDead(RUNS / 3, LONG_TTL_MS));
      expect(new Set(reported).size).toBe(reported.length);
      const rest = await a.presence.reapDead(RUNS, LONG_TTL_MS);
      expect([...reported, ...rest].sort()).toEqual([...runIds].sort());
      expect(await a.presence.reapDead(RUNS, LONG_TTL_MS)).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close(), doomed.close()]);
    }
  });

  it('gives each lease to one of many workers acquiring at once, with consecutive epochs over time', async () => {
    const [a, b] = await twoWorkers();
    try {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? a : b).leases.acquire('contended', `w${i}`, LONG_TTL_MS),
        ),
      );
      expect(results.filter((r) => r.ok)).toEqual([{ ok: true, epoch: 1, cancelRequested: false }]);
      expect(await a.leases.release('contended', 1)).toBe(true);
      const again = await Promise.all(
        [a, b, a, b].map((s, i) => s.leases.acquire('contended', `v${i}`, LONG_TTL_MS)),
      );
      expect(again.filter((r) => r.ok)).toEqual([{ ok: true, epoch: 2, cancelRequested: false }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
