/**
 * The CLI without servers: flag parsing into run queries, the printers (tables and JSON), the
 * exit codes and messages of usage mistakes, and the configuration from variables and flags.
 */
import { readFileSync } from 'node:fs';
import { buildTimeline, type ListedRun, type RunTimeline } from '@baton/client';
import { ConfigError, NotFoundError, RunStateError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '@baton/host';
import { parseDuration } from './arguments.js';
import { envWithFlags, FLAG_VARIABLES } from './context.js';
import { EXIT, RefusedError, UsageError, describeError, exitCodeOf } from './errors.js';
import { filterFromFlags, hasFilter, parseTime, queryFromFlags } from './filters.js';
import { duration, json, runsTable, summaryText, timelineTable, valueText } from './output.js';
import { runCli } from './program.js';
import { bulkExit } from './commands/progress.js';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');

/** Runs one command line with captured output and the given environment. */
async function cli(
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    env,
    io: { out: (t) => (out += t), err: (t) => (err += t) },
  });
  return { code, out, err };
}

describe('filter flags', () => {
  it('map to the RunQuery fields', () => {
    expect(
      queryFromFlags(
        {
          status: 'failed, cancelled',
          workflow: 'orders',
          version: '2',
          createdAfter: '2h',
          createdBefore: '2026-11-25T11:00:00Z',
          updatedAfter: '1700000000000',
          runIdPrefix: 'ord-',
          keyPrefix: 'cust-7',
          worker: 'w-1',
          order: 'oldest',
          limit: '20',
          cursor: 'abc',
        },
        NOW,
      ),
    ).toEqual({
      status: ['failed', 'cancelled'],
      workflow: 'orders',
      version: 2,
      createdAfter: NOW - 2 * 3_600_000,
      createdBefore: Date.parse('2026-11-25T11:00:00Z'),
      updatedAfter: 1_700_000_000_000,
      runIdPrefix: 'ord-',
      idempotencyKeyPrefix: 'cust-7',
      worker: 'w-1',
      order: 'oldest',
      limit: 20,
      cursor: 'abc',
    });
    expect(filterFromFlags({ status: 'failed' })).toEqual({ status: 'failed' });
  });

  it('tell filters from the other options of a command', () => {
    expect(hasFilter({ workflow: 'orders' })).toBe(true);
    expect(hasFilter({ order: 'oldest', limit: '5', cursor: 'c' })).toBe(false);
    // Options of the action, not filters: a run id with them is not "a run id and filters".
    expect(hasFilter({ reason: 'x', yes: true, concurrency: '4' } as never)).toBe(false);
  });

  it('refuse malformed values, naming the flag', () => {
    expect(() => parseTime('--created-after', 'yesterday-ish')).toThrow(
      /--created-after 'yesterday-ish' is not a time; give an ISO time/,
    );
    expect(() => queryFromFlags({ order: 'sideways' })).toThrow(/--order 'sideways' is not an order/);
    expect(() => queryFromFlags({ limit: 'ten' })).toThrow(/--limit 'ten' is not a whole number/);
    expect(() => filterFromFlags({ status: ' , ' })).toThrow(/--status ' , ' names no status/);
    expect(parseTime('--x', '90s', NOW)).toBe(NOW - 90_000);
    expect(parseTime('--x', '7d', NOW)).toBe(NOW - 7 * 86_400_000);
    // An age is a Duration as the API writes one.
    expect(parseTime('--x', '1.5h', NOW)).toBe(NOW - 5_400_000);
    expect(parseTime('--x', '250ms', NOW)).toBe(NOW - 250);
  });
});

describe('duration flags', () => {
  it('take a Duration as the API does, and a bare number as milliseconds as before', () => {
    expect(parseDuration('--jitter', '2m')).toBe(120_000);
    expect(parseDuration('--jitter', '30s')).toBe(30_000);
    expect(parseDuration('--jitter', '1.5h')).toBe(5_400_000);
    expect(parseDuration('--jitter', '3d')).toBe(259_200_000);
    expect(parseDuration('--jitter', '500ms')).toBe(500);
    expect(parseDuration('--jitter', '120000')).toBe(120_000);
    expect(parseDuration('--jitter', '0')).toBe(0);
  });

  it('refuse anything else naming the flag with an example, and a span below the least', () => {
    expect(() => parseDuration('--jitter', '2 minutes')).toThrow(
      "--jitter '2 minutes' is not a duration; give e.g. --jitter 2m (or 500ms, 30s, 1h, 3d, or a number of milliseconds)",
    );
    expect(() => parseDuration('--grace', '-5s')).toThrow(/--grace '-5s' is not a duration/);
    expect(() => parseDuration('--timeout', '0', 1)).toThrow(
      /--timeout '0' is not a duration of 1 ms or more/,
    );
  });

  it('are usage errors of the commands, before any connection', async () => {
    const jitter = await cli(['schedules', 'create', 'orders@1', '--every', '1m', '--jitter', 'soon']);
    expect(jitter).toMatchObject({ code: 2, out: '' });
    expect(jitter.err).toBe(
      "usage: --jitter 'soon' is not a duration; give e.g. --jitter 2m (or 500ms, 30s, 1h, 3d, or a number of milliseconds)\n",
    );
    for (const [argv, flag] of [
      [['schedules', 'update', 's-1', '--grace', 'later'], '--grace'],
      [['schedules', 'create', 'orders@1', '--every', 'hourly'], '--every'],
      [['backlog', '--timeout', '0'], '--timeout'],
      [['versions', '--drained', 'orders@1', '--wait', 'forever'], '--wait'],
    ] as const) {
      const result = await cli([...argv]);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.err).toMatch(new RegExp(`^usage: ${flag} '[^']+' is not a duration`));
    }
  });

  it('show <duration> in the help', async () => {
    const help = (await cli(['schedules', 'create', '--help'])).out;
    for (const flag of ['--every', '--grace', '--jitter']) expect(help).toContain(`${flag} <duration>`);
    expect((await cli(['backlog', '--help'])).out).toContain('--timeout <duration>');
    expect((await cli(['console', '--help'])).out).toContain('--store-timeout <duration>');
  });
});

const RUN: ListedRun = {
  runId: 'run-a1',
  workflow: 'orders',
  version: 2,
  input: {},
  idempotencyKey: null,
  status: 'failed',
  createdAt: Date.parse('2026-11-25T10:00:00Z'),
  updatedAt: Date.parse('2026-11-25T10:00:05Z'),
  attempts: 2,
  owner: null,
  epoch: 2,
};

describe('printers', () => {
  it('prints a sealed value, whole or inside another, as "protected (key k1)" and never its frame', () => {
    const sealed = { '$baton.sealed': 1, key: 'k1', frame: 'QUJD' };
    expect(valueText(sealed)).toBe('protected (key k1)');
    expect(valueText({ kind: 'start', input: sealed })).toBe('{"kind":"start","input":"protected (key k1)"}');
    expect(valueText({ card: 'x' })).toBe('{"card":"x"}');
    expect(valueText(undefined)).toBe('-');
    // Not the sealed form (no frame): printed as it is.
    expect(valueText({ '$baton.sealed': 1, key: 'k1' })).toContain('"key":"k1"');
  });

  it('print a runs page as a table with the cursor for the next page', () => {
    const text = runsTable([RUN, { ...RUN, runId: 'run-a2', status: 'running', owner: 'w-9' }], 'CUR');
    expect(text).toContain('run-a1');
    expect(text).toContain('orders@2');
    expect(text).toContain('2026-11-25T10:00:00.000Z');
    // Narrow, the worker holding the run; with --wide, its epoch too.
    expect(text).toMatch(/│ w-9 +│\n/);
    expect(runsTable([{ ...RUN, owner: 'w-9' }], undefined, true)).toContain('w-9 (epoch 2)');
    expect(text).toMatch(/2 run\(s\); next page: --cursor CUR\n$/);
    expect(runsTable([], undefined)).toMatch(/0 run\(s\); last page/);
  });

  it('print JSON that parses back to the records', () => {
    expect(JSON.parse(json({ runs: [RUN], cursor: 'CUR' }))).toEqual({ runs: [RUN], cursor: 'CUR' });
  });

  it('print a timeline with keys, worker / epoch, durations and failovers', () => {
    const timeline: RunTimeline = {
      runId: 'run-t',
      failovers: 1,
      epochs: [
        { epoch: 1, workerId: 'w-a' },
        { epoch: 2, workerId: 'w-b' },
      ],
      items: [
        {
          kind: 'lease',
          position: 1,
          at: 0,
          epoch: 1,
          workerId: 'w-a',
          previous: undefined,
          reason: 'first',
        },
        {
          kind: 'lease',
          position: 3,
          at: 5_000,
          epoch: 2,
          workerId: 'w-b',
          previous: { epoch: 1, workerId: 'w-a' },
          reason: 'takeover',
        },
        {
          kind: 'activity',
          position: 4,
          at: 5_000,
          epoch: 2,
          workerId: 'w-b',
          seq: 0,
          name: 'charge',
          idempotencyKey: 'run-t:0',
          attempts: 3,
          startedAt: 5_000,
          startKnown: 'estimated',
          endedAt: 7_500,
          durationMs: 2_500,
          outcome: 'completed',
        },
      ],
    };
    const text = timelineTable(timeline);
    expect(text).toContain('activity 0 charge');
    expect(text).toContain('key run-t:0');
    expect(text).toContain('w-b / 2');
    expect(text).toContain('2.5 s ~');
    expect(text).toContain('takeover (failover)');
    expect(text).toContain('epochs: 1: w-a, 2: w-b; failovers: 1');
    expect(duration(850)).toBe('850 ms');
    expect(duration(180_000)).toBe('3.0 min');
  });

  it('print a timeline’s updates, durable promises (never a whole token) and attribute changes', () => {
    const token = 'bp_Xy9zzzzzzzzzzzzzzzzzzzzzzzzzzzzz';
    const at = Date.parse('2026-11-25T10:00:00.000Z');
    type Entry = Parameters<typeof buildTimeline>[1][number]['entry'];
    const entries: Entry[] = [
      { type: 'LeaseAcquired', epoch: 1, workerId: 'w-a', at },
      { type: 'PromiseCreated', seq: 0, token, timeoutAt: at + 60_000, epoch: 1, at: at + 10 },
      {
        type: 'UpdateAccepted',
        updateId: 'u-1',
        name: 'addItem',
        args: { sku: 'A7' },
        epoch: 1,
        at: at + 20,
      },
      {
        type: 'UpdateCompleted',
        updateId: 'u-1',
        name: 'addItem',
        result: { total: 42 },
        epoch: 1,
        at: at + 270,
      },
      { type: 'UpdateAccepted', updateId: 'u-2', name: 'note', args: 'hi', epoch: 1, at: at + 300 },
      {
        type: 'AttributesSet',
        seq: 1,
        attributes: {
          customerId: { type: 'keyword', value: '42' },
          placedAt: { type: 'time', value: at },
          tier: null,
        },
        epoch: 1,
        at: at + 400,
      },
      {
        type: 'PromiseCompleted',
        seq: 0,
        outcome: 'rejected',
        error: { name: 'Error', message: 'over budget', code: 'BUDGET' },
        epoch: 1,
        at: at + 1_500,
      },
    ];
    const timeline = buildTimeline(
      'run-i',
      entries.map((entry, i) => ({ position: i + 1, entry })),
    );
    const text = timelineTable(timeline, true);
    expect(text).toMatch(
      /update 'addItem' .*│ 250 ms .*│ completed .*│ id u-1; args \{"sku":"A7"\}; result \{"total":42\}/,
    );
    expect(text).toMatch(/update 'note' .*│ accepted \(no answer yet\) .*│ id u-2; args "hi"/);
    expect(text).toMatch(
      /promise 0 .*│ 1\.5 s .*│ rejected .*│ token bp_Xy9…; deadline 2026-11-25T10:01:00\.000Z; Error \(BUDGET\): over budget/,
    );
    expect(text).toMatch(
      /attributes 1 .*│ set .*│ customerId=42, placedAt=2026-11-25T10:00:00\.000Z, tier=\(removed\)/,
    );
    expect(text).not.toContain(token);
    expect(json(timeline)).not.toContain(token);
  });

  it('print a bulk summary with each refusal and failure', () => {
    const text = summaryText({
      action: 'retry',
      matched: 3,
      succeeded: ['a'],
      refused: [{ id: 'b', reason: 'retry takes runs that are failed; this one is completed' }],
      failed: [{ id: 'c', error: 'connection lost' }],
      interrupted: false,
    });
    expect(text).toContain('retry: 3 matched, 1 done, 1 refused, 1 failed');
    expect(text).toContain('refused b: retry takes runs that are failed; this one is completed');
    expect(text).toContain('failed  c: connection lost');
  });
});

describe('exit codes', () => {
  it('are 2 for usage, 1 for refusals and failures', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(EXIT.usage);
    expect(exitCodeOf(new ConfigError('x'))).toBe(EXIT.usage);
    expect(exitCodeOf(new RefusedError('x'))).toBe(EXIT.refused);
    expect(exitCodeOf(new NotFoundError('x'))).toBe(EXIT.refused);
    expect(exitCodeOf(new RunStateError('r', 'completed', 'x'))).toBe(EXIT.refused);
    expect(exitCodeOf(new Error('socket hang up'))).toBe(EXIT.refused);
    expect(describeError(new RefusedError('run r is completed'))).toBe('refused: run r is completed');
  });

  it('2 for an unknown command or flag: commander’s one line and where the help is, not the help', async () => {
    const unknown = await cli(['runs', 'frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe("error: unknown command 'frobnicate'\n(see 'baton runs --help')\n");
    const flag = await cli(['--json', 'runs', 'list', '--colour']);
    expect(flag.code).toBe(2);
    expect(flag.err).toBe("error: unknown option '--colour'\n(see 'baton runs list --help')\n");
    // A near miss: commander's suggestion on the same line, the help's pointer on the next.
    const nearFlag = await cli(['runs', 'list', '--statuss', 'failed']);
    expect(nearFlag).toMatchObject({ code: 2, out: '' });
    expect(nearFlag.err).toBe(
      "error: unknown option '--statuss' (did you mean --status?)\n(see 'baton runs list --help')\n",
    );
    const nearCommand = await cli(['runs', 'lst']);
    expect(nearCommand.err).toBe(
      "error: unknown command 'lst' (did you mean list?)\n(see 'baton runs --help')\n",
    );
    const nearGlobal = await cli(['schedules', 'list', '--wid']);
    expect(nearGlobal.err).toBe(
      "error: unknown option '--wid' (did you mean --wide?)\n(see 'baton schedules list --help')\n",
    );
    const missing = await cli(['dlq', 'show']);
    expect(missing.code).toBe(2);
    expect(missing.err).toBe("error: missing required argument 'id'\n(see 'baton dlq show --help')\n");
    expect(missing.out).toBe('');
  });

  it('130 for an interrupted bulk action, saying how many remain; else 1 for any refused or failed, else 0', () => {
    const summary = {
      action: 'pause',
      matched: 40,
      succeeded: [],
      refused: [],
      failed: [],
      interrupted: true,
    };
    let err = '';
    const io = { out: () => undefined, err: (t: string) => (err += t) };
    expect(bulkExit(io, summary, 120, 'run')).toBe(EXIT.interrupted);
    expect(err).toBe(
      'interrupted: 40 of 120 run(s) handled, 80 remain; run the same command again to finish ' +
        '(every action is safe to repeat)\n',
    );
    const refused = [{ id: 'r', reason: 'x' }];
    expect(bulkExit(io, { ...summary, interrupted: false, refused }, 40, 'run')).toBe(EXIT.refused);
    expect(bulkExit(io, { ...summary, interrupted: false }, 40, 'run')).toBe(EXIT.done);
    expect(EXIT.interrupted).toBe(130);
  });

  it('0 and the package version for --version or -V as the only word; a subcommand keeps its --version filter', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-V'])
      expect(await cli([flag])).toMatchObject({ code: 0, out: `${version}\n` });
    // `runs list --version 2` is the workflow-version filter: it goes on to need a fleet (here: none).
    const filter = await cli(['runs', 'list', '--version', '2']);
    expect(filter.code).toBe(2);
    expect(filter.out).toBe('');
    expect(filter.err).toMatch(/BATON_TRANSPORT_URL|BATON_STORE_URL/);
  });

  it('0 for --help', async () => {
    const help = await cli(['runs', 'retry', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--yes/);
    expect(help.out).toMatch(/--status <statuses>/);
  });

  it('2 with the variable named when the store is not configured, before any connection', async () => {
    const missing = await cli(['runs', 'list'], { BATON_TRANSPORT_URL: 'nats://127.0.0.1:1' });
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/BATON_STORE_URL is not set/);
  });

  it('2 for a run id together with filters, or neither, naming the command', async () => {
    const both = await cli(['runs', 'cancel', 'run-1', '--status', 'running']);
    expect(both).toMatchObject({ code: 2, err: 'usage: runs cancel takes a run id or filters, not both\n' });
    const neither = await cli(['runs', 'delete']);
    expect(neither.code).toBe(2);
    expect(neither.err).toMatch(/runs delete needs a run id, or filters .* or --all/);
    const redrive = await cli(['dlq', 'redrive', 'id-1', '--all']);
    expect(redrive.code).toBe(2);
    const start = await cli(['runs', 'start', 'orders', '--input', '{}']);
    expect(start).toMatchObject({ code: 2 });
    expect(start.err).toMatch(/'orders' is not name@version/);
    const priority = await cli(['runs', 'start', 'orders@1', '--input', '{}', '--priority', 'urgent']);
    expect(priority.code).toBe(2);
    expect(priority.err).toMatch(/--priority 'urgent' is not a run priority; use high, normal, low/);
    const badTime = await cli(['runs', 'list', '--created-after', 'soon']);
    expect(badTime.code).toBe(2);
    expect(badTime.err).toMatch(/--created-after 'soon' is not a time/);
  });
});

describe('baton runs start: what a worker would refuse is a usage error, before any connection', () => {
  // No reachable servers: a refusal here comes before the CLI connects to anything.
  const env = { BATON_TRANSPORT_URL: 'nats://127.0.0.1:1', BATON_STORE_URL: 'redis://127.0.0.1:1' };
  it.each([
    [
      ['orders@0'],
      /^usage: <workflow> version must be a positive integer .*; found 0; a worker would refuse this start\n$/,
    ],
    [['has space@1'], /^usage: <workflow> name must be 1-128 characters .*; found "has space"/],
    [['orders@1', '--key', ''], /^usage: --key must be a non-empty string when given; found ""/],
    [['orders@1', '--run-id', 'a/b'], /^usage: --run-id must be 1-128 characters .*; found "a\/b"/],
  ])('runs start %j exits 2 naming the argument or flag', async (args, message) => {
    const result = await cli(['runs', 'start', ...args], env);
    expect(result).toMatchObject({ code: 2, out: '' });
    expect(result.err).toMatch(message);
  });
});

describe('baton promises: mistakes found before any connection', () => {
  const env = { BATON_TRANSPORT_URL: 'nats://127.0.0.1:1', BATON_STORE_URL: 'redis://127.0.0.1:1' };
  it('refuses a value that is not JSON and a reject without its message as usage (2)', async () => {
    const value = await cli(['promises', 'resolve', `bp_${'a'.repeat(32)}`, '--value', '{oops'], env);
    expect(value).toMatchObject({ code: 2, out: '' });
    expect(value.err).toMatch(/^usage: --value is not JSON/);
    const reject = await cli(['promises', 'reject', `bp_${'a'.repeat(32)}`], env);
    expect(reject.code).toBe(2);
    expect(reject.err).toMatch(/required option '--message <text>' not specified/);
  });
});

describe('configuration', () => {
  it('takes the BATON_* variables, each flag overriding its own', () => {
    const env = { BATON_TRANSPORT_URL: 'nats://a:4222', BATON_STORE_URL: 'redis://b:6379', OTHER: 'x' };
    expect(
      envWithFlags(env, {
        storeUrl: 'postgres://c/db',
        postgresSchema: 'tenant_7',
        set: ['BATON_ENCRYPTION_KEY_ID=k2'],
      }),
    ).toEqual({
      ...env,
      BATON_STORE_URL: 'postgres://c/db',
      BATON_POSTGRES_SCHEMA: 'tenant_7',
      BATON_ENCRYPTION_KEY_ID: 'k2',
    });
    expect(() => envWithFlags({}, { set: ['BATON_CONCURRENCY=4'] })).toThrow(
      /--set 'BATON_CONCURRENCY' is not NAME=value with a variable the CLI reads/,
    );
  });
});

describe('baton --help', () => {
  it('lists each connection flag of VARIABLES with the variable it overrides', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    const flagged = VARIABLES.filter((v) => v.flag !== undefined && v.readBy.includes('operator'));
    expect(flagged.map((v) => v.name)).toEqual(
      expect.arrayContaining(['BATON_TRANSPORT_URL', 'BATON_STORE_URL']),
    );
    expect(Object.values(FLAG_VARIABLES)).toEqual(flagged.map((v) => v.name));
    // Each option's entry runs from its flag to the next option (commander wraps long lines).
    const entries = help.out.split(/\n(?=\s+--)/).map((e) => e.replace(/\s+/g, ' ').trim());
    for (const v of flagged) {
      const entry = entries.find((e) => e.startsWith(`${v.flag!.name} `));
      expect(entry, v.flag!.name).toBeDefined();
      expect(entry, v.name).toContain(`(${v.name}`);
    }
  });

  it.each(['console', 'serve'])(
    "lists the console's flags from its variables' rows in %s's help, each naming its variable and default",
    async (command) => {
      const help = await cli([command, '--help']);
      expect(help.code).toBe(0);
      const flagged = VARIABLES.filter((v) => v.flag !== undefined && v.readBy.includes('console'));
      expect(flagged.map((v) => v.flag!.name)).toEqual(
        expect.arrayContaining([
          '--port',
          '--host',
          '--token',
          '--read-only',
          '--metrics-url',
          '--store-timeout',
        ]),
      );
      const entries = help.out.split(/\n(?=\s+--)/).map((e) => e.replace(/\s+/g, ' ').trim());
      for (const v of flagged) {
        const entry = entries.find((e) => e.startsWith(`${v.flag!.name} `));
        expect(entry, v.flag!.name).toBeDefined();
        expect(entry, v.name).toContain(`(${v.name}`);
        if (v.default.startsWith('`'))
          expect(entry, v.name).toContain(`default ${v.default.replaceAll('`', '')}`);
      }
    },
  );
});

describe('baton admin drop', () => {
  it('needs the bus and the store named, before connecting to anything', async () => {
    const missing = await cli(['admin', 'drop', '--yes']);
    expect(missing).toMatchObject({ code: 2, out: '' });
    expect(missing.err).toMatch(/BATON_TRANSPORT_URL|BATON_STORE_URL/);
  });

  it('removes only with --yes, as its help says', async () => {
    const help = await cli(['admin', 'drop', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--yes\s+remove it \(without it, only list it\)/);
  });
});

describe('baton console', () => {
  it('refuses to serve beyond loopback without an access control, before connecting to anything', async () => {
    const { code, err } = await cli(['console', '--host', '0.0.0.0'], {
      BATON_TRANSPORT_URL: 'nats://127.0.0.1:9',
      BATON_STORE_URL: 'redis://127.0.0.1:9',
    });
    expect(code).toBe(EXIT.usage);
    expect(err).toMatch(/no access control: set an access token \(--token or BATON_CONSOLE_TOKEN\)/);
  });

  it('refuses a short token and a bad port, naming them', async () => {
    expect((await cli(['console', '--token', 'short'])).err).toMatch(/at least 16 characters/);
    const port = await cli(['console', '--port', 'eighty']);
    expect(port.code).toBe(EXIT.usage);
    expect(port.err).toMatch(/--port must be a whole number/);
  });
});

describe('baton serve', () => {
  const unreachable = { BATON_TRANSPORT_URL: 'nats://127.0.0.1:9', BATON_STORE_URL: 'redis://127.0.0.1:9' };

  it("lists the API's own flags, and refuses what the console refuses, before connecting", async () => {
    const help = await cli(['serve', '--help']);
    expect(help.out).toMatch(/--workflows <module>/);
    expect(help.out).toMatch(/--api-only/);
    const open = await cli(['serve', '--host', '0.0.0.0'], unreachable);
    expect(open.code).toBe(EXIT.usage);
    expect(open.err).toMatch(/no access control/);
  });

  it('refuses a workflow module that does not load and a short webhook secret, naming them (exit 2)', async () => {
    const missing = await cli(['serve', '--workflows', './no-such-workflows.js'], unreachable);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.err).toMatch(/--workflows: module '\.\/no-such-workflows\.js' could not be loaded/);
    const secret = await cli(['serve'], { ...unreachable, BATON_API_WEBHOOK_SECRET: 'short' });
    expect(secret.code).toBe(EXIT.usage);
    expect(secret.err).toMatch(/BATON_API_WEBHOOK_SECRET must hold secrets of at least 16 characters/);
    expect(secret.err).not.toContain("'short'");
  });
});
