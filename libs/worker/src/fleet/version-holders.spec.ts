import { describe, expect, it } from 'vitest';
import type { FleetStore, ReportedWorker } from '@baton/core/adapter';
import { silentLogger } from '../logger.js';
import { VersionHolders } from './version-holders.js';

function worker(workerId: string, versions: number[]): ReportedWorker {
  return {
    workerId,
    host: 'h',
    pid: 1,
    batonVersion: 'test',
    workflows: [{ name: 'wf', versions }],
    startedAt: 0,
    concurrency: 1,
    runsHeld: 0,
    lastRenewalAt: null,
    draining: false,
    lastSeenAt: 0,
    expiresAt: 1,
  };
}

/** A fleet store whose listings the test answers one by one, in the order they were asked. */
function heldFleet(): {
  store: FleetStore;
  reads: number;
  answer(workers: ReportedWorker[]): void;
} {
  const pending: Array<(w: ReportedWorker[]) => void> = [];
  const fleet = {
    reads: 0,
    store: {
      report: () => Promise.resolve(),
      forget: () => Promise.resolve(),
      depart: () => Promise.resolve(),
      departed: () => Promise.resolve([]),
      list: () => {
        fleet.reads++;
        return new Promise<ReportedWorker[]>((resolve) => pending.push(resolve));
      },
    } satisfies FleetStore,
    answer(workers: ReportedWorker[]) {
      const next = pending.shift();
      if (next === undefined) throw new Error('no listing is waiting for an answer');
      next(workers);
    },
  };
  return fleet;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('VersionHolders', () => {
  it('shares one listing among the questions asked while it is in flight and while it is young', async () => {
    const fleet = heldFleet();
    let now = 0;
    const holders = new VersionHolders(fleet.store, 'self', silentLogger, () => now);
    const a = holders.someoneHas('wf', 2);
    const b = holders.someoneHas('wf', 2);
    await tick();
    fleet.answer([worker('other', [2])]);
    expect(await Promise.all([a, b])).toEqual([true, true]);
    now = 999;
    expect(await holders.someoneHas('wf', 2)).toBe(true);
    expect(fleet.reads).toBe(1);
  });

  it('answers a fresh question with a listing read after it was asked, never one already in flight', async () => {
    const fleet = heldFleet();
    const now = 0;
    const holders = new VersionHolders(fleet.store, 'self', silentLogger, () => now);
    // A listing leaves before the new worker has written its report...
    const early = holders.someoneHas('wf', 2);
    await tick();
    expect(fleet.reads).toBe(1);
    // ...and the questions that may end in a dead letter are asked while it is in flight.
    const fresh1 = holders.someoneHas('wf', 2, true);
    const fresh2 = holders.someoneHas('wf', 2, true);
    fleet.answer([worker('old', [1])]);
    expect(await early).toBe(false);
    await tick();
    // One more read for both fresh questions, issued after the first settled.
    expect(fleet.reads).toBe(2);
    fleet.answer([worker('old', [1]), worker('new', [1, 2])]);
    expect(await Promise.all([fresh1, fresh2])).toEqual([true, true]);
    expect(holders.missingForMs('wf', 2)).toBe(0);
  });

  it('reads afresh for a fresh question even while the cached listing is young', async () => {
    const fleet = heldFleet();
    let now = 0;
    const holders = new VersionHolders(fleet.store, 'self', silentLogger, () => now);
    const first = holders.someoneHas('wf', 2);
    await tick();
    fleet.answer([]);
    expect(await first).toBe(false);
    now = 10;
    const fresh = holders.someoneHas('wf', 2, true);
    await tick();
    expect(fleet.reads).toBe(2);
    fleet.answer([worker('new', [2])]);
    expect(await fresh).toBe(true);
  });

  it('counts the time a version has been missing from its first unanswered listing, and says unknown when the read fails', async () => {
    let now = 0;
    let fail = false;
    const store: FleetStore = {
      report: () => Promise.resolve(),
      forget: () => Promise.resolve(),
      depart: () => Promise.resolve(),
      departed: () => Promise.resolve([]),
      list: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve([worker('self', [2])])),
    };
    const holders = new VersionHolders(store, 'self', silentLogger, () => now);
    // Only this worker itself lists the version: nobody else has it.
    expect(await holders.someoneHas('wf', 2, true)).toBe(false);
    now = 700;
    expect(holders.missingForMs('wf', 2)).toBe(700);
    fail = true;
    expect(await holders.someoneHas('wf', 2, true)).toBeUndefined();
    now = 900;
    expect(holders.missingForMs('wf', 2)).toBe(900);
  });
});
