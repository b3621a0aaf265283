import { describe, expect, it } from 'vitest';
import type { CheckpointSummary } from '@baton/core/adapter';
import type { JournalEntry, PositionedEntry } from '@baton/core/runtime';
import { buildTimeline, type ActivityItem, type LeaseItem } from './timeline.js';

/** A journal from entries, positions 1, 2, 3, … */
function journal(entries: JournalEntry[]): PositionedEntry[] {
  return entries.map((entry, i) => ({ position: i + 1, entry }));
}

const lease = (epoch: number, workerId: string, at: number): JournalEntry => ({
  type: 'LeaseAcquired',
  epoch,
  workerId,
  at,
});
const done = (seq: number, name: string, epoch: number, at: number, attempts = 1): JournalEntry => ({
  type: 'ActivityCompleted',
  seq,
  name,
  epoch,
  at,
  result: seq,
  attempts,
});

describe('buildTimeline', () => {
  it('gives each activity its attempts, times, duration, idempotency key, worker and epoch', () => {
    const timeline = buildTimeline(
      'run-1',
      journal([
        lease(1, 'w-a', 1_000),
        done(0, 'reserve', 1, 1_250, 3),
        { type: 'ActivityStarted', seq: 1, name: 'charge', epoch: 1, at: 1_300 },
        done(1, 'charge', 1, 1_700),
        { type: 'RunCompleted', result: 7, epoch: 1, at: 1_710 },
      ]),
    );
    const activities = timeline.items.filter((i): i is ActivityItem => i.kind === 'activity');
    expect(activities).toEqual([
      expect.objectContaining({
        seq: 0,
        name: 'reserve',
        idempotencyKey: 'run-1:0',
        attempts: 3,
        startedAt: 1_000,
        startKnown: 'estimated',
        endedAt: 1_250,
        durationMs: 250,
        outcome: 'completed',
        epoch: 1,
        workerId: 'w-a',
      }),
      expect.objectContaining({
        seq: 1,
        name: 'charge',
        idempotencyKey: 'run-1:1',
        startedAt: 1_300,
        startKnown: 'journaled',
        durationMs: 400,
        outcome: 'completed',
        position: 3,
      }),
    ]);
    expect(timeline.items.map((i) => i.kind)).toEqual(['lease', 'activity', 'activity', 'end']);
    expect(timeline.items.at(-1)).toMatchObject({ kind: 'end', outcome: 'completed', workerId: 'w-a' });
    expect(timeline.failovers).toBe(0);
  });

  it('shows a failover: the in-flight step, the takeover by a new worker at a new epoch, and who finished it', () => {
    const timeline = buildTimeline(
      'run-2',
      journal([
        lease(1, 'w-a', 1_000),
        done(0, 'first', 1, 1_100),
        { type: 'ActivityStarted', seq: 1, name: 'pay', epoch: 1, at: 1_200 },
        // w-a dies here; w-b takes the run.
        lease(2, 'w-b', 5_000),
        done(1, 'pay', 2, 5_300, 1),
        { type: 'RunFailed', error: { name: 'Error', message: 'card declined' }, epoch: 2, at: 5_400 },
      ]),
    );
    const leases = timeline.items.filter((i): i is LeaseItem => i.kind === 'lease');
    expect(leases).toEqual([
      expect.objectContaining({ epoch: 1, workerId: 'w-a', reason: 'first', previous: undefined }),
      expect.objectContaining({
        epoch: 2,
        workerId: 'w-b',
        reason: 'takeover',
        previous: { epoch: 1, workerId: 'w-a' },
      }),
    ]);
    expect(timeline.failovers).toBe(1);
    expect(timeline.epochs).toEqual([
      { epoch: 1, workerId: 'w-a' },
      { epoch: 2, workerId: 'w-b' },
    ]);
    // Started under epoch 1, ended under epoch 2: the item names the worker that ended it.
    const pay = timeline.items.find((i) => i.kind === 'activity' && i.seq === 1);
    expect(pay).toMatchObject({ startedAt: 1_200, endedAt: 5_300, epoch: 2, workerId: 'w-b' });
    expect(timeline.items.at(-1)).toMatchObject({
      kind: 'end',
      outcome: 'failed',
      error: { message: 'card declined' },
    });
  });

  it('shows the first epoch of a run whose first owner wrote no lease marker, and the takeover after it', () => {
    const timeline = buildTimeline(
      'run-7',
      journal([done(0, 'a', 1, 1_000), lease(2, 'w-b', 9_000), done(1, 'b', 2, 9_100)]),
    );
    expect(timeline.items.map((i) => i.kind)).toEqual(['lease', 'activity', 'lease', 'activity']);
    expect(timeline.items[0]).toMatchObject({ epoch: 1, workerId: null, unmarked: true, reason: 'first' });
    expect(timeline.items[2]).toMatchObject({
      epoch: 2,
      workerId: 'w-b',
      reason: 'takeover',
      previous: { epoch: 1, workerId: null },
    });
    expect(timeline.epochs).toEqual([
      { epoch: 1, workerId: null },
      { epoch: 2, workerId: 'w-b' },
    ]);
    expect(timeline.failovers).toBe(1);
  });

  it('tells a resume after a wait and after a retry from a takeover', () => {
    const timeline = buildTimeline(
      'run-3',
      journal([
        lease(1, 'w-a', 0),
        { type: 'TimerScheduled', seq: 0, wakeAt: 60_000, epoch: 1, at: 10 },
        lease(2, 'w-b', 60_010),
        { type: 'TimerFired', seq: 0, epoch: 2, at: 60_020 },
        { type: 'SignalWaitStarted', seq: 1, name: 'approve', timeoutAt: null, epoch: 2, at: 60_030 },
        lease(3, 'w-a', 70_000),
        {
          type: 'SignalReceived',
          seq: 1,
          name: 'approve',
          signalId: 'sig-1',
          payload: true,
          epoch: 3,
          at: 70_010,
        },
        {
          type: 'ActivityFailed',
          seq: 2,
          name: 'ship',
          error: { name: 'Error', message: 'x' },
          epoch: 3,
          at: 70_100,
          attempts: 2,
        },
        { type: 'RunFailed', error: { name: 'Error', message: 'x' }, epoch: 3, at: 70_110 },
        lease(4, 'w-c', 90_000),
        done(2, 'ship', 4, 90_500),
      ]),
    );
    expect(timeline.items.filter((i) => i.kind === 'lease').map((i) => (i as LeaseItem).reason)).toEqual([
      'first',
      'after-wait',
      'after-wait',
      'after-retry',
    ]);
    expect(timeline.failovers).toBe(0);
    expect(timeline.items.find((i) => i.kind === 'timer')).toMatchObject({
      seq: 0,
      wakeAt: 60_000,
      outcome: 'fired',
      firedAt: 60_020,
      workerId: 'w-a',
    });
    expect(timeline.items.find((i) => i.kind === 'signal')).toMatchObject({
      seq: 1,
      name: 'approve',
      outcome: 'received',
      signalId: 'sig-1',
      endedAt: 70_010,
      epoch: 3,
    });
    // The failed attempt and the retried one are one item each, in journal order.
    const ship = timeline.items.filter((i) => i.kind === 'activity');
    expect(ship.map((i) => (i as ActivityItem).outcome)).toEqual(['failed', 'completed']);
    expect(ship[0]).toMatchObject({ attempts: 2, error: { message: 'x' }, workerId: 'w-a' });
    expect(ship[1]).toMatchObject({ workerId: 'w-c', epoch: 4 });
  });

  it('lists a fenced-off owner’s late write apart, and keeps it out of the steps', () => {
    const timeline = buildTimeline(
      'run-4',
      journal([lease(1, 'w-a', 0), lease(2, 'w-b', 100), done(0, 'late', 1, 150), done(0, 'late', 2, 200)]),
    );
    expect(timeline.items.map((i) => i.kind)).toEqual(['lease', 'lease', 'fenced-write', 'activity']);
    expect(timeline.items[2]).toMatchObject({
      entryType: 'ActivityCompleted',
      seq: 0,
      epoch: 1,
      workerId: 'w-a',
    });
    expect(timeline.items[3]).toMatchObject({ epoch: 2, workerId: 'w-b', outcome: 'completed' });
  });

  it('places each checkpoint after the entries it covers, and shows a step still in flight', () => {
    const checkpoints: CheckpointSummary[] = [
      {
        seq: 1,
        epoch: 1,
        journalPosition: 2,
        status: 'running',
        schemaVersion: 1,
        createdAt: 1_120,
        size: 321,
      },
    ];
    const timeline = buildTimeline(
      'run-5',
      journal([
        lease(1, 'w-a', 1_000),
        done(0, 'a', 1, 1_100),
        { type: 'ActivityStarted', seq: 1, name: 'b', epoch: 1, at: 1_200 },
      ]),
      checkpoints,
    );
    expect(timeline.items.map((i) => i.kind)).toEqual(['lease', 'activity', 'checkpoint', 'activity']);
    expect(timeline.items[2]).toMatchObject({ seq: 1, epoch: 1, sizeBytes: 321, at: 1_120 });
    expect(timeline.items[3]).toMatchObject({
      outcome: 'in-flight',
      endedAt: undefined,
      durationMs: undefined,
      attempts: undefined,
    });
  });

  it('gives an empty timeline for a run whose journal is empty (not claimed yet)', () => {
    expect(buildTimeline('run-6', [])).toEqual({ runId: 'run-6', items: [], epochs: [], failovers: 0 });
  });
});
