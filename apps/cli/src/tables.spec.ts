/**
 * Every table the CLI prints, rendered with long values (128-character run ids, long workflow and
 * worker names, long reasons): each line fits 120 columns, measured as a terminal shows it (colour
 * codes left out), ids shortened in their middle stay distinct, and with `wide` every column and
 * every value is there whole.
 */
import { stripVTControlCharacters } from 'node:util';
import type {
  DepartedFleetWorker,
  FleetBacklog,
  FleetWorker,
  ListedRun,
  ReplayCheckReport,
  RunTimeline,
  ScheduleRecord,
  StoredDeadLetter,
  VersionsListing,
} from '@baton/client';
import { describe, expect, it } from 'vitest';
import { installationText, type InstallationPart } from './commands/admin.js';
import { backlogTable, departedTable, workersTable } from './commands/fleet.js';
import { replayCheckText } from './commands/replay-check.js';
import { schedulesTable } from './commands/schedules.js';
import { versionsTable } from './commands/versions.js';
import { lettersTable, runsTable, spanText, timelineTable } from './output.js';
import { fieldTable, listTable, shortened, TABLE_WIDTH, wrapped } from './table.js';

/** What a terminal shows of a line: its characters without colour codes. */
function visible(line: string): number {
  return Array.from(stripVTControlCharacters(line)).length;
}

function expectFits(text: string): void {
  for (const line of text.split('\n')) expect(visible(line), line).toBeLessThanOrEqual(TABLE_WIDTH);
}

const AT = Date.parse('2026-11-25T10:00:00Z');
const LONG_ID = (n: number): string => `order-${'x'.repeat(110)}-${String(n).padStart(4, '0')}-end`;
const WORKFLOW = 'order_fulfilment_across_every_warehouse_of_the_region';
const WORKER = 'worker-eu-west-1a-ip-10-0-17-203-deployment-7d9f8c6b5-xkq2p-1234-9f8e7d6c';

const RUNS: ListedRun[] = [1, 2, 3].map((n) => ({
  runId: LONG_ID(n),
  workflow: WORKFLOW,
  version: 12,
  input: {},
  idempotencyKey: null,
  status: 'suspended',
  createdAt: AT,
  updatedAt: AT + 5_000,
  attempts: 3,
  owner: WORKER,
  epoch: 4,
}));

const TIMELINE: RunTimeline = {
  runId: LONG_ID(1),
  failovers: 1,
  epochs: [1, 2, 3].map((epoch) => ({ epoch, workerId: `${WORKER}-${epoch}` })),
  items: [
    {
      kind: 'activity',
      position: 4,
      at: AT,
      epoch: 2,
      workerId: WORKER,
      seq: 0,
      name: 'charge_the_customer_card_with_the_payment_provider',
      idempotencyKey: `${LONG_ID(1)}:0`,
      attempts: 3,
      startedAt: AT,
      startKnown: 'estimated',
      endedAt: AT + 2_500,
      durationMs: 2_500,
      outcome: 'failed',
      error: { name: 'PaymentDeclinedError', message: 'the card was declined by the issuer '.repeat(4) },
    },
  ],
} as unknown as RunTimeline;

const LETTERS = [1, 2].map((n) => ({
  id: `1734-${n}`,
  code: 'unknown-workflow-version-for-a-long-time',
  at: AT,
  data: new Uint8Array(2048),
  reason: `no live worker registers ${WORKFLOW}@12 and the grace ran out `.repeat(3),
  headers: {},
})) as unknown as StoredDeadLetter[];

const SCHEDULES = [1, 2].map((n) => ({
  scheduleId: `nightly-report-for-the-european-region-${n}`,
  workflow: WORKFLOW,
  version: 3,
  spec: { cron: '30 2 * * 1-5', timeZone: 'America/Argentina/ComodRivadavia' },
  paused: false,
  nextDueAt: AT,
  lastRunId: LONG_ID(n),
})) as unknown as ScheduleRecord[];

const WORKERS = [1, 2].map((n) => ({
  workerId: `${WORKER}-${n}`,
  host: 'ip-10-0-17-203.eu-west-1.compute.internal',
  pid: 12345,
  batonVersion: '0.1.0',
  workflows: [
    { name: WORKFLOW, versions: [11, 12] },
    { name: 'billing', versions: [3] },
  ],
  runsHeld: 37,
  concurrency: 100,
  startedAt: AT,
  lastRenewalAt: AT + 1_000,
  draining: false,
  connected: true,
})) as unknown as FleetWorker[];

const DEPARTED = [1, 2].map((n) => ({
  ...WORKERS[0],
  workerId: `${WORKER}-${n}`,
  ended: n === 1 ? 'expired' : 'handed-off',
  lastSeenAt: AT,
  endedAt: AT + 5_000,
  keptUntil: AT + 3_605_000,
  runsHeld: 1,
  runs: [LONG_ID(n)],
  heldRuns: [{ runId: LONG_ID(n), status: 'running', owner: `${WORKER}-3` }],
})) as unknown as DepartedFleetWorker[];

const BACKLOG = {
  transport: 'kafka',
  total: 12,
  parts: [{ name: `${WORKFLOW}.runs.high partition 11 of group ${WORKER}`, pending: 12, ackPending: 3 }],
} as unknown as FleetBacklog;

const VERSIONS = {
  complete: true,
  versions: [
    {
      workflow: WORKFLOW,
      version: 12,
      unfinished: { total: 7, byStatus: { pending: 2, running: 3, suspended: 2 } },
      deadLetteredStarts: 1,
      workers: [`${WORKER}-1`, `${WORKER}-2`, `${WORKER}-3`],
      drainingWorkers: [`${WORKER}-4`],
      drained: false,
      stranded: false,
    },
  ],
} as unknown as VersionsListing;

const REPLAY = {
  counts: { checked: 2, ok: 0, nondeterministic: 2, failed: 0, skipped: 0, error: 0 },
  truncated: false,
  runs: [1, 2].map((n) => ({
    runId: LONG_ID(n),
    workflow: WORKFLOW,
    version: 12,
    status: 'suspended',
    result: 'nondeterministic',
    seq: 1,
    expected: 'activity:reserve_the_stock_in_the_nearest_warehouse',
    found: 'activity:reserve_the_stock_in_the_nearest_warehouse_renamed',
  })),
} as unknown as ReplayCheckReport;

const PARTS: InstallationPart[] = [
  {
    role: 'store',
    adapter: 'redis',
    server: 'redis://127.0.0.1:6379',
    namespace: { redisKeyPrefix: 'installation-of-the-european-region-production:' },
    listing: {
      items: [
        {
          kind: 'keys',
          name: `installation-of-the-european-region-production:${'signal-ids'.repeat(8)}:*`,
          detail: '120000 key(s)',
        },
      ],
    },
  },
];

/** Every table, narrow and wide, with the values the wide one must show whole. */
const TABLES: { name: string; render: (wide: boolean) => string; heads: string[]; whole: string[] }[] = [
  {
    name: 'runs list',
    render: (wide) => runsTable(RUNS, 'CURSOR', wide),
    heads: ['run id', 'workflow', 'status', 'created', 'updated', 'claims', 'held by'],
    whole: [LONG_ID(1), `${WORKFLOW}@12`, `${WORKER} (epoch 4)`],
  },
  {
    name: 'runs history',
    render: (wide) => timelineTable(TIMELINE, wide),
    heads: ['pos', 'item', 'worker / epoch', 'at', 'took', 'attempts', 'outcome', 'detail'],
    whole: [`key ${LONG_ID(1)}:0`, `${WORKER} / 2`],
  },
  {
    name: 'dlq list',
    render: (wide) => lettersTable(LETTERS, undefined, wide),
    heads: ['id', 'code', 'dead-lettered', 'bytes', 'reason'],
    whole: [LETTERS[0]!.reason.trim()],
  },
  {
    name: 'schedules list',
    render: (wide) => schedulesTable(SCHEDULES, undefined, wide),
    heads: ['schedule', 'workflow', 'when', 'state', 'next due', 'last run'],
    whole: [LONG_ID(1), 'cron 30 2 * * 1-5 (America/Argentina/ComodRivadavia)'],
  },
  {
    name: 'workers',
    render: (wide) => workersTable(WORKERS, wide),
    heads: ['worker', 'host', 'baton', 'workflows', 'runs held', 'started', 'last renewal', 'state'],
    whole: [`${WORKER}-1`, `${WORKFLOW}@11,12 billing@3`],
  },
  {
    name: 'workers --all (departed)',
    render: (wide) => departedTable(DEPARTED, wide),
    heads: ['departed worker', 'host', 'ended', 'last seen', 'ended at', 'runs held', 'kept until'],
    whole: [`${WORKER}-1`, `running on ${WORKER}-3`],
  },
  {
    name: 'backlog',
    render: (wide) => backlogTable(BACKLOG, wide),
    heads: ['part', 'pending', 'ack pending'],
    whole: [BACKLOG.parts[0]!.name],
  },
  {
    name: 'versions',
    render: (wide) => versionsTable(VERSIONS, wide),
    heads: [
      'version',
      'unfinished',
      'by status',
      'dead-lettered starts',
      'live workers',
      'draining',
      'state',
    ],
    whole: [`${WORKER}-1 ${WORKER}-2 ${WORKER}-3`],
  },
  {
    name: 'replay-check',
    render: (wide) => replayCheckText(REPLAY, true, wide),
    heads: ['run id', 'workflow', 'status', 'result', 'detail'],
    whole: [
      LONG_ID(2),
      'step #1: the journal has activity:reserve_the_stock_in_the_nearest_warehouse, the new code asks for ' +
        'activity:reserve_the_stock_in_the_nearest_warehouse_renamed',
    ],
  },
  {
    name: 'admin drop',
    render: (wide) => installationText(PARTS, [], wide),
    heads: ['where', 'kind', 'name', 'holds'],
    whole: [PARTS[0]!.listing.items[0]!.name],
  },
];

/** The cells of a table's heading line. */
function headsOf(text: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith('│'))!;
  return line
    .split('│')
    .map((cell) => cell.trim())
    .filter((cell) => cell !== '');
}

describe('every table, narrow (the default)', () => {
  it.each(TABLES)('$name fits 120 columns, its ids shortened and still distinct', ({ render, heads }) => {
    const text = render(false);
    expectFits(text);
    const shown = headsOf(text);
    // The most useful columns stay, in their order; the others wait for --wide.
    expect(heads).toEqual(expect.arrayContaining(shown));
    expect(shown.length).toBeGreaterThanOrEqual(3);
  });

  it('shortens long run ids in their middle and keeps them apart', () => {
    const text = runsTable(RUNS, undefined);
    const ids = text
      .split('\n')
      .filter((l) => l.includes('order-'))
      .map((l) => l.split('│')[1]!.trim());
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    for (const [i, id] of ids.entries()) {
      expect(id).toContain('…');
      expect(id.startsWith('order-xxx')).toBe(true);
      expect(id.endsWith(`${String(i + 1).padStart(4, '0')}-end`)).toBe(true);
    }
  });

  it('leaves a table that fits as it is', () => {
    const text = runsTable([{ ...RUNS[0]!, runId: 'r-1', workflow: 'orders', owner: 'w-1' }], undefined);
    expect(text).not.toContain('…');
    expect(text).toContain('w-1');
  });
});

describe('every table with --wide', () => {
  it.each(TABLES)('$name shows every column and its values whole', ({ render, heads, whole }) => {
    const text = render(true);
    expect(headsOf(text)).toEqual(heads);
    for (const value of whole) expect(text).toContain(value);
    expect(text).not.toContain('…');
  });
});

describe('a record field by field', () => {
  const rows: [string, string][] = [
    ['run id', LONG_ID(1)],
    ['input', JSON.stringify({ items: Array.from({ length: 30 }, (_, i) => ({ sku: `SKU-${i}`, qty: i })) })],
  ];

  it('wraps a long value over lines that fit, losing nothing', () => {
    const text = fieldTable(rows);
    expectFits(text);
    const values = text
      .split('\n')
      .filter((l) => l.startsWith('│'))
      .map((l) => l.split('│')[2]!.trim());
    expect(values.join('')).toContain(rows[1]![1]);
  });

  it('keeps each value on its line with --wide', () => {
    expect(fieldTable(rows, true)).toContain(rows[1]![1]);
  });
});

describe('the table helpers', () => {
  it('shorten at the end or in the middle, to the width asked', () => {
    expect(shortened('abcdefghij', 6, 'end')).toBe('abcde…');
    expect(shortened('abcdefghij', 6, 'middle')).toBe('abc…ij');
    expect(shortened('abc', 6, 'middle')).toBe('abc');
  });

  it('wrap at a space when one is near the end of the line', () => {
    expect(wrapped('the quick brown fox jumps', 10)).toBe('the quick\nbrown fox\njumps');
    expect(wrapped('x'.repeat(25), 10)).toBe(`${'x'.repeat(10)}\n${'x'.repeat(10)}\n${'x'.repeat(5)}`);
  });

  it('never shortens a column that may not be, nor one below its min, even when the table stays too wide', () => {
    const text = listTable(
      ['a', { head: 'b', shorten: 'end', min: 30 }],
      [['y'.repeat(100), 'z'.repeat(100)]],
    );
    expect(text).toContain('y'.repeat(100));
    expect(text).toContain(`${'z'.repeat(29)}…`);
  });

  it('show a time span as the duration flags take it', () => {
    expect([0, 1_500, 90_000, 120_000, 3_600_000, 86_400_000].map(spanText)).toEqual([
      '0',
      '1500ms',
      '90s',
      '2m',
      '1h',
      '1d',
    ]);
  });
});
