/**
 * `npm run bench:store-ops -- [--runs N] [--batch N] [--repeat N]`: what each of the
 * operations a chain10 run makes of the Redis store costs the server, operation by operation, with
 * nothing else running: the claim of a new run (`runs.createAndLease`), the closing of its cancels
 * (`control.closeCancels`), eleven group-commit pointers (`journalIndex.appendPointers`, one call per
 * step for the whole batch, as a flush sends them) and the finish with its final checkpoint
 * (`runs.finish`). Every call goes through the store's public API, `--batch` runs at a time, so the
 * store's batcher puts each operation of a batch in one batch.lua call, as a busy worker's does.
 *
 * The figures are the server's own counters around each phase: `INFO cpu` (the process's CPU, its
 * network reads and replies included) and `INFO commandstats` (the time inside the scripts, and the
 * part of it in the commands they called), per run. `npm run bench` measures the same server beside
 * a worker and a bus, where two cores are shared; this one isolates the store's work, so that a
 * change to batch.lua can be told from the noise of a full run (docs/performance.md, "Round four").
 *
 * It starts a private redis-server (no persistence, as the bench's), so that nobody else's load is
 * in the figures, and empties it between rounds.
 */
import { randomUUID } from 'node:crypto';
import { GROUP_POSITION_BASE, type Checkpoint, type Store } from '@baton/core/adapter';
import { redisStore } from '@baton/store-redis';
import { startPrivateRedis } from '@baton/testing/servers';
import { Redis } from 'ioredis';
import { parseCommandArgs, runCommand, UsageError, wholeNumber } from './command.js';
import { parseRedisInfo } from './server-probes.js';

const USAGE = `Usage: npm run bench:store-ops -- [--runs N] [--batch N] [--repeat N]

  --runs N     runs per round (default 6000)
  --batch N    runs whose operations go together, as one worker's concurrent runs (default 100)
  --repeat N   rounds, each on an emptied server (default 3)
  --help       this text

Needs redis-server on PATH (or BATON_REDIS_SERVER_BIN), as npm run bench's private servers do.`;

interface StoreOpsConfig {
  runs: number;
  batch: number;
  repeat: number;
}

function parse(argv: string[]): StoreOpsConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    batch: { type: 'string' },
    repeat: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const config = {
    runs: values.runs === undefined ? 6000 : wholeNumber('--runs', values.runs),
    batch: values.batch === undefined ? 100 : wholeNumber('--batch', values.batch),
    repeat: values.repeat === undefined ? 3 : wholeNumber('--repeat', values.repeat),
  };
  if (config.batch > config.runs)
    throw new UsageError(`--batch ${config.batch} is more than --runs ${config.runs}`);
  return config;
}

/** chain10's steps: a pointer for each of its ten activities and one for its end. */
const POINTERS_PER_RUN = 11;
const OWNER = 'bench-store-ops';
const LEASE_MS = 60_000;

/** The server's counters: process CPU and the time in scripts and in the commands they called, in µs. */
interface Counters {
  cpu: number;
  scripts: number;
  commands: number;
}

async function counters(admin: Redis): Promise<Counters> {
  const cpu = parseRedisInfo(await admin.info('cpu'));
  let scripts = 0;
  let commands = 0;
  // 'cmdstat_<command>' -> 'calls=…,usec=…,…'; the bench's own INFO calls are left out.
  for (const [field, value] of Object.entries(parseRedisInfo(await admin.info('commandstats')))) {
    const command = field.slice('cmdstat_'.length);
    const usec = Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
    if (command === 'evalsha' || command === 'eval') scripts += usec;
    else if (command !== 'info') commands += usec;
  }
  return { cpu: (Number(cpu.used_cpu_user) + Number(cpu.used_cpu_sys)) * 1e6, scripts, commands };
}

/** A chain10 run's final checkpoint, as the worker writes it (about 1.4 KB encoded). */
function finalCheckpoint(runId: string, at: number): Checkpoint {
  const entries: Checkpoint['entries'] = [{ type: 'LeaseAcquired', epoch: 1, at, workerId: OWNER }];
  for (let seq = 0; seq < 10; seq++) {
    entries.push({
      type: 'ActivityCompleted',
      seq,
      name: 'increment',
      result: seq + 1,
      attempts: 1,
      epoch: 1,
      at,
    });
  }
  return {
    runId,
    seq: 1,
    epoch: 1,
    journalPosition: GROUP_POSITION_BASE + POINTERS_PER_RUN,
    entries,
    status: 'completed',
    schemaVersion: 1,
    createdAt: at,
  };
}

type Phase = 'claim' | 'close cancels' | `${typeof POINTERS_PER_RUN} pointers` | 'finish';

async function round(store: Store, admin: Redis, config: StoreOpsConfig): Promise<Map<Phase, Counters>> {
  const journal = store.journalIndex;
  if (journal === undefined) throw new Error('this store has no journal index (group commit)');
  const batches: string[][] = [];
  for (let i = 0; i < config.runs; i += config.batch) {
    batches.push(Array.from({ length: Math.min(config.batch, config.runs - i) }, () => randomUUID()));
  }
  const spent = new Map<Phase, Counters>();
  const phase = async (name: Phase, work: (ids: string[]) => Promise<unknown>): Promise<void> => {
    const before = await counters(admin);
    for (const ids of batches) await work(ids);
    const after = await counters(admin);
    spent.set(name, {
      cpu: after.cpu - before.cpu,
      scripts: after.scripts - before.scripts,
      commands: after.commands - before.commands,
    });
  };
  await phase('claim', (ids) =>
    Promise.all(
      ids.map(async (runId) => {
        const claimed = await store.runs.createAndLease(
          {
            runId,
            workflow: 'bench_chain10',
            version: 1,
            input: { n: 0 },
            idempotencyKey: null,
            traceparent: null,
          },
          OWNER,
          LEASE_MS,
        );
        if (!claimed.created || !claimed.lease.ok) throw new Error(`run ${runId} was not claimed`);
      }),
    ),
  );
  await phase('close cancels', (ids) =>
    Promise.all(ids.map((runId) => store.control.closeCancels(runId, 1))),
  );
  const log = `bench-${randomUUID().slice(0, 8)}`;
  let record = 100;
  await phase(`${POINTERS_PER_RUN} pointers`, async (ids) => {
    for (let step = 0; step < POINTERS_PER_RUN; step++) {
      const appends = ids.map((runId) => ({
        runId,
        // 0 for a new run's first append, else the position of its last pointer.
        expectedLastPosition: step === 0 ? 0 : GROUP_POSITION_BASE + step,
        ...(step === 0 ? {} : { expectedLastPointer: { log, record: record - 1 } }),
        log,
        record,
      }));
      const results = await journal.appendPointers(appends);
      const refused = results.find((result) => result.status !== 'appended');
      if (refused) throw new Error(`a pointer was not appended: ${JSON.stringify(refused)}`);
      record++;
    }
  });
  await phase('finish', (ids) =>
    Promise.all(
      ids.map((runId) =>
        store.runs.finish(runId, 1, { status: 'completed', result: 10 }, finalCheckpoint(runId, Date.now())),
      ),
    ),
  );
  return spent;
}

async function run(config: StoreOpsConfig): Promise<void> {
  const server = await startPrivateRedis(['--appendonly', 'no']);
  const admin = new Redis(server.url, { lazyConnect: true });
  try {
    await admin.connect();
    console.log(
      `Redis store operations of a chain10 run, ${config.runs.toLocaleString('en')} runs a round in batches of ` +
        `${config.batch}, on a private redis-server (${server.url}); µs per run: the server's CPU ` +
        '(INFO cpu), and inside it the scripts and the commands they called (INFO commandstats)',
    );
    const rows: string[][] = [];
    const row = (round: number, what: string, c: Counters): number =>
      rows.push([
        String(round),
        what,
        ...[c.cpu, c.scripts, c.commands].map((us) => (us / config.runs).toFixed(1)),
      ]);
    for (let i = 1; i <= config.repeat; i++) {
      const store = redisStore({ url: server.url, keyPrefix: `bench-ops-${randomUUID().slice(0, 8)}:` });
      await store.connect();
      try {
        const total: Counters = { cpu: 0, scripts: 0, commands: 0 };
        for (const [name, c] of await round(store, admin, config)) {
          row(i, name, c);
          total.cpu += c.cpu;
          total.scripts += c.scripts;
          total.commands += c.commands;
        }
        row(i, 'a run', total);
      } finally {
        await store.close();
      }
      await admin.flushall();
    }
    const header = ['round', 'operation', 'server CPU', 'in scripts', 'in commands'];
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
    const line = (cells: string[]): string =>
      cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
    console.log(line(header));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) console.log(line(r));
  } finally {
    admin.disconnect();
    await server.stop();
  }
}

await runCommand(USAGE, parse, run);
