import { describe, expect, it } from 'vitest';
import type { CheckpointSummary } from '@baton/core/adapter';
import type { JournalEntry, PositionedEntry } from '@baton/core/runtime';
import {
  buildTimeline,
  SUMMARY_MAX,
  valueSummary,
  type ActivityItem,
  type LeaseItem,
  type PromiseItem,
  type UpdateItem,
} from './timeline.js';

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

  it('shows each update accepted and answered, with its arguments and result, and one still under way', () => {
    const timeline = buildTimeline(
      'run-7',
      journal([
        lease(1, 'w-a', 0),
        { type: 'SignalWaitStarted', seq: 0, name: 'go', timeoutAt: null, epoch: 1, at: 10 },
        lease(2, 'w-b', 1_000),
        {
          type: 'UpdateAccepted',
          updateId: 'u-1',
          name: 'addItem',
          args: { sku: 'A7', qty: 2 },
          epoch: 2,
          at: 1_010,
        },
        done(1, 'price', 2, 1_050),
        {
          type: 'UpdateCompleted',
          updateId: 'u-1',
          name: 'addItem',
          result: { total: 42 },
          epoch: 2,
          at: 1_060,
        },
        { type: 'UpdateAccepted', updateId: 'u-2', name: 'addItem', args: { sku: '' }, epoch: 2, at: 1_100 },
        {
          type: 'UpdateCompleted',
          updateId: 'u-2',
          name: 'addItem',
          error: { name: 'RangeError', message: 'no such sku' },
          epoch: 2,
          at: 1_120,
        },
        // The run suspended again (its signal wait still open), then took another update.
        lease(3, 'w-a', 5_000),
        { type: 'UpdateAccepted', updateId: 'u-3', name: 'note', args: 'hello', epoch: 3, at: 5_010 },
      ]),
    );
    const updates = timeline.items.filter((i): i is UpdateItem => i.kind === 'update');
    expect(updates).toEqual([
      expect.objectContaining({
        updateId: 'u-1',
        name: 'addItem',
        args: '{"sku":"A7","qty":2}',
        outcome: 'completed',
        result: '{"total":42}',
        at: 1_010,
        endedAt: 1_060,
        epoch: 2,
        workerId: 'w-b',
      }),
      expect.objectContaining({
        updateId: 'u-2',
        outcome: 'failed',
        error: { name: 'RangeError', message: 'no such sku' },
      }),
      expect.objectContaining({ updateId: 'u-3', args: '"hello"', outcome: 'accepted', endedAt: undefined }),
    ]);
    // An update's answer during a wait is followed by a suspension, not a crash.
    expect(timeline.items.filter((i): i is LeaseItem => i.kind === 'lease').map((i) => i.reason)).toEqual([
      'first',
      'after-wait',
      'after-wait',
    ]);
    expect(timeline.failovers).toBe(0);
  });

  it('shows each durable promise made, completed or timed out, and never its whole token', () => {
    const tokens = ['bp_Ab3aaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bp_Cd4bbbbbbbbbbbbbbbbbbbbbbbbbbbbb'];
    // The worker checkpoints a run as suspended before it gives it up to wait: here after the
    // promises of steps 0 and 1, not after step 2's (its owner died: the next lease is a takeover).
    const suspended = (seq: number, epoch: number, journalPosition: number): CheckpointSummary => ({
      seq,
      epoch,
      journalPosition,
      status: 'suspended',
      schemaVersion: 3,
      createdAt: journalPosition,
      size: 100,
    });
    const timeline = buildTimeline(
      'run-8',
      journal([
        lease(1, 'w-a', 0),
        { type: 'PromiseCreated', seq: 0, token: tokens[0]!, timeoutAt: null, epoch: 1, at: 10 },
        lease(2, 'w-b', 2_000),
        {
          type: 'PromiseCompleted',
          seq: 0,
          outcome: 'resolved',
          value: { approved: true },
          epoch: 2,
          at: 2_010,
        },
        { type: 'PromiseCreated', seq: 1, token: tokens[1]!, timeoutAt: 9_000, epoch: 2, at: 2_020 },
        lease(3, 'w-a', 9_010),
        { type: 'PromiseTimedOut', seq: 1, epoch: 3, at: 9_020 },
        {
          type: 'PromiseCreated',
          seq: 2,
          token: 'bp_Ef5ccccccccccccccccccccccccccccc',
          timeoutAt: null,
          epoch: 3,
          at: 9_030,
        },
        lease(4, 'w-b', 9_500),
        {
          type: 'PromiseCompleted',
          seq: 2,
          outcome: 'rejected',
          error: { name: 'Error', message: 'over budget', code: 'BUDGET' },
          epoch: 4,
          at: 9_510,
        },
        {
          type: 'PromiseCreated',
          seq: 3,
          token: 'bp_Gh6ddddddddddddddddddddddddddddd',
          timeoutAt: 20_000,
          epoch: 4,
          at: 9_520,
        },
      ]),
      [suspended(1, 1, 2), suspended(2, 2, 5)],
    );
    const promises = timeline.items.filter((i): i is PromiseItem => i.kind === 'promise');
    expect(promises).toEqual([
      expect.objectContaining({
        seq: 0,
        tokenHint: 'bp_Ab3…',
        timeoutAt: null,
        outcome: 'resolved',
        value: '{"approved":true}',
        endedAt: 2_010,
        epoch: 2,
        workerId: 'w-b',
      }),
      expect.objectContaining({ seq: 1, tokenHint: 'bp_Cd4…', timeoutAt: 9_000, outcome: 'timed-out' }),
      expect.objectContaining({
        seq: 2,
        outcome: 'rejected',
        error: { name: 'Error', message: 'over budget', code: 'BUDGET' },
      }),
      expect.objectContaining({ seq: 3, outcome: 'pending', timeoutAt: 20_000, endedAt: undefined }),
    ]);
    // A run awaiting a promise suspends: the next owner resumes it after a wait.
    expect(timeline.items.filter((i): i is LeaseItem => i.kind === 'lease').map((i) => i.reason)).toEqual([
      'first',
      'after-wait',
      'after-wait',
      'takeover',
    ]);
    expect(timeline.failovers).toBe(1);
    const text = JSON.stringify(timeline);
    for (const token of tokens) expect(text).not.toContain(token);
    expect(text).not.toMatch(/bp_[A-Za-z0-9_-]{7,}/);
  });

  it('shows each change of the run’s search attributes, removals included', () => {
    const timeline = buildTimeline(
      'run-9',
      journal([
        lease(1, 'w-a', 0),
        {
          type: 'AttributesSet',
          seq: 0,
          attributes: { customerId: { type: 'keyword', value: '42' }, tier: null },
          epoch: 1,
          at: 5,
        },
      ]),
    );
    expect(timeline.items[1]).toEqual({
      kind: 'attributes',
      position: 2,
      at: 5,
      epoch: 1,
      workerId: 'w-a',
      seq: 0,
      attributes: { customerId: { type: 'keyword', value: '42' }, tier: null },
    });
  });

  it('summarises a value on one line, cut, with sealed values named by their key and references by size', () => {
    const sealed = { '$baton.sealed': 1, key: 'k2', frame: 'AAAA' };
    expect(valueSummary({ card: sealed, n: 1 })).toBe('{"card":"protected (key k2)","n":1}');
    expect(valueSummary(sealed)).toBe('protected (key k2)');
    expect(valueSummary(undefined, { sha256: 'ab', size: 2048, run: 'r' })).toBe(
      'stored by reference (2048 bytes)',
    );
    const long = valueSummary({ text: 'x'.repeat(500) });
    expect(long).toHaveLength(SUMMARY_MAX);
    expect(long.endsWith('…')).toBe(true);
    expect(valueSummary('a\nb')).toBe('"a\\nb"');
    expect(valueSummary(null)).toBe('null');
  });
});
