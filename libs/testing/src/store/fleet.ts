/**
 * Store conformance, FleetStore section: the workers' reports, stamped and expired on the store's
 * clock, listed by worker id, normalized the same way by every store, refused whole when wrong;
 * and departed workers: kept after a graceful stop (`handed-off`) or a report that ran out
 * (`expired`) for the retention asked, with their runs, then pruned.
 * Each test gets a fresh store (its own prefix or schema), so a listing holds only its reports.
 */
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_REPORTED_RUNS, type Store, type WorkerReport } from '@baton/core/adapter';
import { uniqueId } from '../conformance-helpers.js';
import { EXPIRY_WAIT_MS, LONG_TTL_MS, SHORT_TTL_MS } from './helpers.js';

/** A report of a worker with two workflows, given in no particular order. */
export function report(workerId: string, overrides: Partial<WorkerReport> = {}): WorkerReport {
  return {
    workerId,
    host: 'pod-7f9c',
    pid: 4242,
    batonVersion: '0.1.0',
    workflows: [
      { name: 'shipping', versions: [3, 1, 3] },
      { name: 'billing', versions: [2] },
    ],
    startedAt: 1_700_000_000_000,
    lastRenewalAt: null,
    runsHeld: 0,
    concurrency: 16,
    draining: false,
    ...overrides,
  };
}

export function describeFleetConformance(store: () => Store): void {
  describe('fleet', () => {
    it('lists a report stamped with the store clock, its workflows by name with versions ascending', async () => {
      const s = store();
      const workerId = uniqueId('w');
      const before = await s.leases.now();
      await s.fleet.report(report(workerId), LONG_TTL_MS);
      const after = await s.leases.now();

      const [listed, ...others] = await s.fleet.list();
      expect(others).toEqual([]);
      expect(listed).toEqual({
        ...report(workerId),
        workflows: [
          { name: 'billing', versions: [2] },
          { name: 'shipping', versions: [1, 3] },
        ],
        lastSeenAt: expect.any(Number),
        expiresAt: expect.any(Number),
      });
      expect(listed!.lastSeenAt).toBeGreaterThanOrEqual(before);
      expect(listed!.lastSeenAt).toBeLessThanOrEqual(after);
      expect(listed!.expiresAt).toBe(listed!.lastSeenAt + LONG_TTL_MS);
    });

    it('replaces a worker’s report with its next one, and lists workers by id', async () => {
      const s = store();
      const [a, b, c] = ['fleet-a', 'fleet-b', 'fleet-c'].map((id) => uniqueId(id)) as [
        string,
        string,
        string,
      ];
      await s.fleet.report(report(c), LONG_TTL_MS);
      await s.fleet.report(report(a), LONG_TTL_MS);
      await s.fleet.report(report(b), LONG_TTL_MS);
      const first = (await s.fleet.list()).find((w) => w.workerId === a)!;
      await s.fleet.report(
        report(a, { runsHeld: 5, lastRenewalAt: 1_700_000_001_000, draining: true, readsGroupJournal: true }),
        LONG_TTL_MS,
      );

      const listed = await s.fleet.list();
      expect(listed.map((w) => w.workerId)).toEqual([a, b, c]);
      expect(listed[0]).toMatchObject({
        runsHeld: 5,
        lastRenewalAt: 1_700_000_001_000,
        draining: true,
        readsGroupJournal: true,
      });
      // A report without it (a release from before group commit) is listed without it.
      expect(listed[1]!.readsGroupJournal).toBeUndefined();
      expect(listed[0]!.lastSeenAt).toBeGreaterThanOrEqual(first.lastSeenAt);
    });

    it('drops a report once its time to live has passed, until the worker reports again', async () => {
      const s = store();
      const gone = uniqueId('gone');
      const kept = uniqueId('kept');
      await s.fleet.report(report(gone), SHORT_TTL_MS);
      await s.fleet.report(report(kept), LONG_TTL_MS);
      expect((await s.fleet.list()).map((w) => w.workerId).sort()).toEqual([gone, kept].sort());

      await sleep(EXPIRY_WAIT_MS);
      expect((await s.fleet.list()).map((w) => w.workerId)).toEqual([kept]);
      // Removed, not only hidden: a listing later still leaves it out, and a new report lists it again.
      expect((await s.fleet.list()).map((w) => w.workerId)).toEqual([kept]);
      await s.fleet.report(report(gone, { runsHeld: 1 }), LONG_TTL_MS);
      expect((await s.fleet.list()).find((w) => w.workerId === gone)).toMatchObject({ runsHeld: 1 });
    });

    it('forgets a worker, and forgetting an unknown one changes nothing', async () => {
      const s = store();
      const stays = uniqueId('stays');
      const leaves = uniqueId('leaves');
      await s.fleet.report(report(stays), LONG_TTL_MS);
      await s.fleet.report(report(leaves), LONG_TTL_MS);
      await s.fleet.forget(leaves);
      await s.fleet.forget(uniqueId('never-reported'));
      expect((await s.fleet.list()).map((w) => w.workerId)).toEqual([stays]);
    });

    it('refuses a wrong report or time to live with a ConfigError naming it, and writes nothing', async () => {
      const s = store();
      const workerId = uniqueId('bad');
      const cases: [WorkerReport, number, RegExp][] = [
        [report(''), LONG_TTL_MS, /workerId is ''/],
        [report(workerId, { runsHeld: -1 }), LONG_TTL_MS, /runsHeld is -1/],
        [report(workerId, { concurrency: 0 }), LONG_TTL_MS, /concurrency is 0/],
        [
          report(workerId, { workflows: [{ name: 'x', versions: [] }] }),
          LONG_TTL_MS,
          /workflows\[0\]\.versions/,
        ],
        [
          report(workerId, { workflows: [{ name: 'x', versions: [1.5] }] }),
          LONG_TTL_MS,
          /versions\[0\] is 1.5/,
        ],
        [report(workerId, { draining: 'yes' as unknown as boolean }), LONG_TTL_MS, /draining is 'yes'/],
        [report(workerId, { host: 'pod\u0000x' }), LONG_TTL_MS, /host is .*NUL/],
        [report(workerId), 0, /ttlMs is 0/],
        [report(workerId), Number.NaN, /ttlMs is/],
      ];
      for (const [bad, ttl, message] of cases) {
        await expect(s.fleet.report(bad, ttl)).rejects.toMatchObject({
          code: 'BATON_CONFIG',
          message: expect.stringMatching(message),
        });
      }
      expect(await s.fleet.list()).toEqual([]);
    });

    describe('departed workers', () => {
      it('keeps a worker that departed as handed-off, with the runs it held, ended on the store clock', async () => {
        const s = store();
        const leaving = uniqueId('leaving');
        const staying = uniqueId('staying');
        await s.fleet.report(
          report(leaving, { runsHeld: 2, runs: ['r-b', 'r-a'] }),
          LONG_TTL_MS,
          LONG_TTL_MS,
        );
        await s.fleet.report(report(staying), LONG_TTL_MS, LONG_TTL_MS);
        const before = await s.leases.now();
        await s.fleet.depart(
          report(leaving, { runsHeld: 1, runs: ['r-c', 'r-a', 'r-c'], draining: true }),
          LONG_TTL_MS,
        );
        const after = await s.leases.now();

        expect((await s.fleet.list()).map((w) => w.workerId)).toEqual([staying]);
        const [departed, ...others] = await s.fleet.departed();
        expect(others).toEqual([]);
        expect(departed).toEqual({
          ...report(leaving),
          workflows: [
            { name: 'billing', versions: [2] },
            { name: 'shipping', versions: [1, 3] },
          ],
          runsHeld: 1,
          // Ascending, each once: the runs of its last word, not of its earlier report.
          runs: ['r-a', 'r-c'],
          draining: true,
          ended: 'handed-off',
          lastSeenAt: expect.any(Number),
          endedAt: expect.any(Number),
          keptUntil: expect.any(Number),
        });
        expect(departed!.endedAt).toBeGreaterThanOrEqual(before);
        expect(departed!.endedAt).toBeLessThanOrEqual(after);
        expect(departed!.lastSeenAt).toBe(departed!.endedAt);
        expect(departed!.keptUntil).toBe(departed!.endedAt + LONG_TTL_MS);
      });

      it('keeps a worker whose report ran out as expired, ended when it ran out, with its last report’s runs', async () => {
        const s = store();
        const killed = uniqueId('killed');
        const unkept = uniqueId('unkept');
        await s.fleet.report(
          report(killed, { runsHeld: 3, runs: ['r-1', 'r-2'] }),
          SHORT_TTL_MS,
          LONG_TTL_MS,
        );
        // Asked for no retention: it drops out and is kept nowhere, as before departed workers.
        await s.fleet.report(report(unkept), SHORT_TTL_MS);
        const reported = (await s.fleet.list()).find((w) => w.workerId === killed)!;
        expect(await s.fleet.departed()).toEqual([]);

        await sleep(EXPIRY_WAIT_MS);
        // Found by the departed listing itself, without a live listing first.
        const [departed, ...others] = await s.fleet.departed();
        expect(others).toEqual([]);
        expect(departed).toMatchObject({
          workerId: killed,
          ended: 'expired',
          runsHeld: 3,
          runs: ['r-1', 'r-2'],
          lastSeenAt: reported.lastSeenAt,
          endedAt: reported.expiresAt,
          keptUntil: reported.expiresAt + LONG_TTL_MS,
        });
        expect(await s.fleet.list()).toEqual([]);
        // Moved once, not again: a later listing gives the same record.
        expect(await s.fleet.departed()).toEqual([departed]);
      });

      it('lists the latest ended first, prunes a record past its retention, and forgets one that reports again', async () => {
        const s = store();
        const [first, second, back] = ['first', 'second', 'back'].map((id) => uniqueId(id)) as [
          string,
          string,
          string,
        ];
        await s.fleet.depart(report(first), SHORT_TTL_MS);
        await s.fleet.depart(report(back), LONG_TTL_MS);
        await sleep(5);
        await s.fleet.depart(report(second), LONG_TTL_MS);
        expect((await s.fleet.departed()).map((w) => w.workerId)).toEqual([second, back, first]);

        await s.fleet.report(report(back), LONG_TTL_MS, LONG_TTL_MS);
        await sleep(EXPIRY_WAIT_MS);
        expect((await s.fleet.departed()).map((w) => w.workerId)).toEqual([second]);
        expect((await s.fleet.list()).map((w) => w.workerId)).toEqual([back]);
      });

      it('keeps nothing for a departure with retention 0, nor for a plain forget', async () => {
        const s = store();
        const zero = uniqueId('zero');
        const forgotten = uniqueId('forgotten');
        await s.fleet.report(report(zero), LONG_TTL_MS, LONG_TTL_MS);
        await s.fleet.report(report(forgotten), LONG_TTL_MS, LONG_TTL_MS);
        await s.fleet.depart(report(zero), 0);
        await s.fleet.forget(forgotten);
        expect(await s.fleet.list()).toEqual([]);
        expect(await s.fleet.departed()).toEqual([]);
      });

      it('refuses a wrong run list or retention with a ConfigError naming it, and writes nothing', async () => {
        const s = store();
        const workerId = uniqueId('bad-runs');
        const tooMany = Array.from({ length: MAX_REPORTED_RUNS + 1 }, (_, i) => `r-${i}`);
        await expect(s.fleet.report(report(workerId, { runs: tooMany }), LONG_TTL_MS)).rejects.toMatchObject({
          code: 'BATON_CONFIG',
          message: expect.stringMatching(/runs lists 101 run ids; give at most 100/),
        });
        await expect(s.fleet.report(report(workerId, { runs: [''] }), LONG_TTL_MS)).rejects.toMatchObject({
          code: 'BATON_CONFIG',
          message: expect.stringMatching(/runs\[0\] is ''/),
        });
        await expect(s.fleet.report(report(workerId), LONG_TTL_MS, -1)).rejects.toMatchObject({
          code: 'BATON_CONFIG',
          message: expect.stringMatching(/keepMs is -1/),
        });
        await expect(s.fleet.depart(report(workerId), 1.5)).rejects.toMatchObject({
          code: 'BATON_CONFIG',
          message: expect.stringMatching(/keepMs is 1.5/),
        });
        expect(await s.fleet.list()).toEqual([]);
        expect(await s.fleet.departed()).toEqual([]);
      });
    });
  });
}
