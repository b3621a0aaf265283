import { describe, expect, it } from 'vitest';
import { checkedStore } from './checked-store.js';
import type { CheckedRunQuery, RunListing } from './contracts/run-queries.js';
import { DEFAULT_SCHEDULE_PAGE, type NewSchedule } from './contracts/schedules.js';
import type { StoreAdapter } from './contracts/store.js';
import type { WorkerReport } from './contracts/fleet.js';

/**
 * A store adapter that records what reaches it: the capabilities checkedStore checks, one it
 * passes through (`leases`), a member of its own (`state`) and a method that changes it.
 */
class RecordingAdapter {
  readonly name = 'recording';
  state = 'created';
  readonly calls: Array<[string, unknown[]]> = [];
  /** What runs.list answers next. */
  listing: RunListing = { runs: [] };
  readonly leases = { now: async () => 42 };
  readonly runs = {
    list: async (query: CheckedRunQuery) => this.record('runs.list', query, this.listing),
    count: async () => this.record('runs.count', undefined, { total: 0, byStatus: {}, byWorkflow: {} }),
  };
  readonly schedules = {
    create: async (schedule: NewSchedule) => this.record('schedules.create', schedule, {}),
    get: async (scheduleId: string) => this.record('schedules.get', scheduleId, undefined),
    update: async (scheduleId: string, revision: number, next: unknown) =>
      this.record('schedules.update', [scheduleId, revision, next], {}),
    delete: async (scheduleId: string) => this.record('schedules.delete', scheduleId, {}),
    list: async (query: unknown) => this.record('schedules.list', query, { schedules: [] }),
    due: async (limit: number) => this.record('schedules.due', limit, { now: 0, schedules: [] }),
  };
  readonly fleet = {
    report: async (report: WorkerReport, ttlMs: number) =>
      this.record('fleet.report', [report, ttlMs], undefined),
  };
  readonly concurrency = {
    acquire: async (request: unknown) => this.record('concurrency.acquire', request, {}),
    release: async (request: unknown) => this.record('concurrency.release', request, []),
    state: async (key: string) => this.record('concurrency.state', key, {}),
  };
  readonly rateLimits = {
    take: async (request: unknown) => this.record('rateLimits.take', request, {}),
  };
  readonly updates = {
    request: async (runId: string, request: unknown) =>
      this.record('updates.request', [runId, request], { found: true, wake: false }),
    settle: async (runId: string, epoch: number, settlement: unknown) =>
      this.record('updates.settle', [runId, epoch, settlement], {}),
    outcome: async (runId: string, updateId: string) =>
      this.record('updates.outcome', [runId, updateId], undefined),
  };

  readonly queries = {
    ask: async (request: unknown, timeoutMs: number) =>
      this.record('queries.ask', [request, timeoutMs], { status: 'unanswered', heard: false }),
    listen: () => () => undefined,
    claim: async (queryId: string) => this.record('queries.claim', queryId, undefined),
    answer: async (queryId: string) => this.record('queries.answer', queryId, undefined),
  };

  async connect(): Promise<void> {
    this.state = 'open';
  }

  async close(): Promise<void> {
    this.state = 'closed';
  }

  private record<T>(operation: string, argument: unknown, answer: T): T {
    this.calls.push([operation, [argument]]);
    return answer;
  }
}

function setUp() {
  const adapter = new RecordingAdapter();
  return { adapter, store: checkedStore(adapter as unknown as StoreAdapter & RecordingAdapter) };
}

const schedule: NewSchedule = {
  scheduleId: 'nightly',
  workflow: 'report',
  version: 1,
  input: null,
  spec: { everyMs: 60_000 },
  catchup: { missed: 'skip', limit: 1, graceMs: 0 },
  overlap: 'skip',
  jitterMs: 0,
  paused: false,
  nextDueAt: null,
  nextFireAt: null,
  queuedDueAt: null,
  lastDueAt: null,
  lastRunId: null,
};

const report: WorkerReport = {
  workerId: 'w1',
  host: 'h',
  pid: 1,
  batonVersion: '0.1.0',
  workflows: [
    { name: 'b', versions: [2, 1, 2] },
    { name: 'a', versions: [1] },
  ],
  startedAt: 0,
  lastRenewalAt: null,
  runsHeld: 0,
  concurrency: 1,
  draining: false,
};

const query = { queryId: 'q1', runId: 'r1', workflow: 'orders', version: 1, name: 'progress', to: null };

describe('checkedStore', () => {
  it('refuses every bad argument with a ConfigError, as a rejection, before the adapter is asked', async () => {
    const { adapter, store } = setUp();
    const refusals: Array<[string, () => Promise<unknown>]> = [
      ['runs.list limit', () => store.runs.list({ limit: 0 })],
      ['runs.list status', () => store.runs.list({ status: 'lost' as never })],
      ['runs.list cursor', () => store.runs.list({ cursor: 'not-a-cursor' })],
      ['schedules.create', () => store.schedules.create({ ...schedule, overlap: 'never' as never })],
      ['schedules.get', () => store.schedules.get('no spaces')],
      ['schedules.update', () => store.schedules.update('nightly', 1, { ...schedule, version: 0 })],
      ['schedules.update id', () => store.schedules.update('no spaces', 1, schedule)],
      ['schedules.delete', () => store.schedules.delete('no spaces')],
      ['schedules.list', () => store.schedules.list({ limit: 100_000 })],
      ['schedules.due', () => store.schedules.due(0)],
      ['fleet.report', () => store.fleet.report({ ...report, pid: -1 }, 1_000)],
      ['fleet.report ttl', () => store.fleet.report(report, 0)],
      ['concurrency.acquire', () => store.concurrency.acquire({ key: '', limit: 1, runId: 'r' })],
      ['concurrency.release', () => store.concurrency.release({ key: 'k', limit: 0, runId: 'r' })],
      [
        'rateLimits.take',
        () => store.rateLimits.take({ name: 'no spaces', key: '', limit: 1, perMs: 1_000 }),
      ],
      ['updates.request id', () => store.updates.request('r', { updateId: '', name: 'add', args: 1 })],
      ['updates.request name', () => store.updates.request('r', { updateId: 'u', name: '', args: 1 })],
      [
        'updates.settle',
        () =>
          store.updates.settle('r', 1, {
            updateId: 'x'.repeat(257),
            name: 'add',
            outcome: { status: 'completed', result: 1 },
          }),
      ],
      ['updates.outcome', () => store.updates.outcome('r', 'a\u0000b')],
      ['queries.ask timeout', () => store.queries.ask(query, 0)],
      ['queries.ask version', () => store.queries.ask({ ...query, version: 0 }, 1_000)],
      ['queries.ask name', () => store.queries.ask({ ...query, name: 'two words' }, 1_000)],
      ['queries.ask worker', () => store.queries.ask({ ...query, to: '' }, 1_000)],
    ];
    for (const [what, call] of refusals) {
      const answer = call();
      expect(answer, what).toBeInstanceOf(Promise);
      await expect(answer, what).rejects.toMatchObject({ name: 'ConfigError', code: 'BATON_CONFIG' });
    }
    expect(adapter.calls).toEqual([]);
  });

  it('hands the adapter the checked query and makes the cursors from the positions it answers', async () => {
    const { adapter, store } = setUp();
    const run = { runId: 'r2', createdAt: 5 } as RunListing['runs'][number];
    adapter.listing = { runs: [run], next: { createdAt: 5, runId: 'r2' } };
    const first = await store.runs.list({ status: ['failed', 'completed'], limit: 1 });
    expect(first.runs).toEqual([run]);
    expect(adapter.calls[0]).toEqual([
      'runs.list',
      [
        {
          filter: { status: ['completed', 'failed'] },
          statuses: new Set(['completed', 'failed']),
          order: 'newest',
          limit: 1,
          after: undefined,
        },
      ],
    ]);
    // The next page starts after the position the adapter answered, read back from the cursor.
    adapter.listing = { runs: [] };
    const last = await store.runs.list({ status: ['completed', 'failed'], limit: 1, cursor: first.cursor! });
    expect(last).toEqual({ runs: [] });
    expect((adapter.calls[1]![1][0] as CheckedRunQuery).after).toEqual({ createdAt: 5, runId: 'r2' });
    // A cursor is good only for the query it came from.
    await expect(
      store.runs.list({ status: 'failed', limit: 1, cursor: first.cursor! }),
    ).rejects.toMatchObject({
      code: 'BATON_CONFIG',
      message: expect.stringContaining('issued for another filter or order'),
    });
    expect(adapter.calls).toHaveLength(2);
  });

  it('hands the adapter each record normalized, and listings with their page size', async () => {
    const { adapter, store } = setUp();
    await store.fleet.report({ ...report, extra: true } as WorkerReport, 5_000);
    await store.schedules.create({ ...schedule, extra: true } as NewSchedule);
    await store.schedules.update('nightly', 3, { ...schedule, paused: true });
    await store.schedules.list();
    await store.schedules.due(10);
    const [reported, created, updated, listed, due] = adapter.calls.map(([, [argument]]) => argument);
    expect(reported).toEqual([
      {
        ...report,
        workflows: [
          { name: 'a', versions: [1] },
          { name: 'b', versions: [1, 2] },
        ],
      },
      5_000,
    ]);
    expect(created).toEqual(schedule);
    const { scheduleId: _id, ...fields } = schedule;
    expect(updated).toEqual(['nightly', 3, { ...fields, paused: true }]);
    expect(listed).toEqual({ limit: DEFAULT_SCHEDULE_PAGE });
    expect(due).toBe(10);
  });

  it("leaves everything else the adapter's own: its members, its other capabilities, its methods' state", async () => {
    const { adapter, store } = setUp();
    expect(store).toBeInstanceOf(RecordingAdapter);
    expect(store.leases).toBe(adapter.leases);
    expect(await store.runs.count()).toMatchObject({ total: 0 });
    expect(await store.concurrency.state('k')).toEqual({});
    // A valid ask reaches the adapter as it was; the worker's side of the mailbox passes through.
    expect(await store.queries.ask(query, 1_000)).toEqual({ status: 'unanswered', heard: false });
    expect(adapter.calls.at(-1)).toEqual(['queries.ask', [[query, 1_000]]]);
    expect(await store.queries.claim('q1', 'w1')).toBeUndefined();
    await store.connect();
    expect(adapter.state).toBe('open');
    expect(store.state).toBe('open');
    await store.close();
    expect(adapter.state).toBe('closed');
    expect(Object.hasOwn(store, 'state')).toBe(false);
  });
});
