/**
 * The real `baton` binary (`node apps/cli/dist/main.js`, built first) run as a process against a
 * real fleet: worker processes on the real servers, one fleet per bus + store pair (NATS + Redis,
 * NATS + PostgreSQL, Redis + Redis, Kafka + PostgreSQL), each in its own namespace. Per pair, in
 * order (1, 6 and 7, and the parent and child, only on one pair per store: PAIRS):
 *
 * 1. `runs list` with filters, as a table and as JSON, paged with the `cursor` round trip;
 * 2. the bad-input cases: unknown run id, malformed cursor, invalid filter, an action on a run in
 *    the wrong state, a redrive of a dead letter that still does not parse (exit codes, messages,
 *    nothing changed);
 * 3. bulk retry of failed runs: the dry-run count, the fix, `--yes`, and the runs complete;
 * 4. `runs history` of a run whose worker was SIGKILLed mid-run: both epochs and workers, the
 *    takeover, the idempotency keys; the redrive of a poison message (a start for a workflow the
 *    first worker lacked), dead-lettered again while no worker has it, and redriven by the worker
 *    that has it when that one starts;
 * 5. `workers` and `backlog`; `runs pause` of a running run whose owner is then SIGKILLed: it stays
 *    paused (no worker takes it, no step runs) until `runs resume`, then completes with every step
 *    run once; pause and resume in bulk by filter;
 * 6. `versions` and the deploy gate `versions --drained <workflow>@<version>`: exit 1 while a run of
 *    the version waits for a signal, 0 once it completed (with `--wait`), 2 for a malformed one;
 * 7. `schedules create` (a bad cron refused with exit 2), `list`, `show` with the next due times in
 *    the schedule's zone, `update` (new timing and note; nothing given, or an unknown id, refused),
 *    `pause`, `resume` and `delete`, while the fleet fires the schedule.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type RunTimeline } from '@baton/client';
import { WorkerFleet, REPO_ROOT, type WorkerProcess } from '@baton/testing/crash';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { loadAdapterCode, operatorAdapters, readOperatorConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import type { StepsInput } from './cli-workflows.spec-helper.js';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const WORKFLOWS = resolve(REPO_ROOT, 'apps/cli/src/cli-workflows.spec-helper.ts');
const WORKFLOWS_LATE = resolve(REPO_ROOT, 'apps/cli/src/cli-workflows-late.spec-helper.ts');
const STEPS = { name: 'cli_steps', version: 1 };

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Result> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: REPO_ROOT, env, timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The pairs. `storeChecks` marks the one pair per store that also runs the tests of commands that
 * only read or write the store (run listings, parent and child, a version's drain, schedules):
 * on the other pairs they would repeat the same store calls through the same binary (CI time).
 * Everything that touches the bus (start, signal, dead letters, backlog, workers, SIGKILLs) runs
 * on every pair.
 */
interface Pair {
  name: string;
  bus: string;
  store: string;
  storeChecks: boolean;
  extra: Record<string, string>;
}
const PAIRS: Pair[] = [
  { name: 'nats+redis', bus: natsTestUrl(), store: redisTestUrl(), storeChecks: true, extra: {} },
  { name: 'nats+postgres', bus: natsTestUrl(), store: postgresTestUrl(), storeChecks: true, extra: {} },
  // Redis alone: the Redis transport and the Redis store on one server, as docs/redis-only.md sets them up.
  { name: 'redis+redis', bus: redisTestUrl(), store: redisTestUrl(), storeChecks: false, extra: {} },
  {
    name: 'kafka+postgres',
    bus: kafkaTestUrl(),
    store: postgresTestUrl(),
    storeChecks: false,
    // As the crash suite: a short session timeout, so a SIGKILLed member's partitions move soon.
    extra: { BATON_KAFKA_PARTITIONS: '3', BATON_KAFKA_SESSION_TIMEOUT_MS: '3000' },
  },
];

// The code of every pair's adapters, which operatorAdapters builds below (as the CLI loads it).
for (const pair of PAIRS) {
  await loadAdapterCode(readOperatorConfig({ BATON_TRANSPORT_URL: pair.bus, BATON_STORE_URL: pair.store }));
}

/**
 * One pair's tests, in order (each builds on the fleet the previous ones left). `concurrent: false`
 * keeps them in order inside a lane that runs beside another (LANES).
 */
function describePair(pair: Pair): void {
  describe(`the baton CLI on ${pair.name}`, { concurrent: false }, () => {
    const ns = `cli${randomBytes(4).toString('hex')}`;
    /** What the CLI and the workers read: the URLs and the namespace, as operators set them. */
    const env: Record<string, string> = {
      BATON_TRANSPORT_URL: pair.bus,
      BATON_STORE_URL: pair.store,
      ...isolatedEnv('transport', pair.bus, ns),
      ...isolatedEnv('store', pair.store, ns),
      ...pair.extra,
    };
    const fleet = new WorkerFleet({
      ...env,
      BATON_WORKFLOWS: WORKFLOWS,
      BATON_LEASE_MS: '1500',
      BATON_REAP_INTERVAL_MS: '200',
      BATON_FETCH_WAIT_MS: '100',
    });
    const adapters = operatorAdapters(readOperatorConfig(env));
    const client = new Client({ transport: adapters.transport, store: adapters.store });
    let dir = '';
    let first: WorkerProcess;

    /** Runs `baton …` with only the pair's variables (and PATH) in its environment. */
    const baton = (...args: string[]): Promise<Result> =>
      exec(process.execPath, [CLI_MAIN, ...args], { PATH: process.env.PATH, ...env }, 60_000);

    async function finished(runId: string): Promise<string> {
      return until(`run ${runId} to finish`, async () => {
        const run = await client.describe(runId).catch(() => undefined);
        return run && ['completed', 'failed', 'cancelled'].includes(run.status) ? run.status : undefined;
      });
    }

    async function start(input: StepsInput, key: string): Promise<string> {
      return (await client.start<StepsInput>(STEPS, input, { idempotencyKey: key })).runId;
    }

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'baton-cli-'));
      await client.connect();
      // No grace: a start for a version no worker has is dead-lettered at once (step 4).
      first = await fleet.spawn({ BATON_WORKER_ID: `${ns}-first`, BATON_MISSING_VERSION_GRACE_MS: '0' });
    }, 60_000);

    afterAll(async () => {
      await fleet.shutdown();
      await adapters.close();
      await removeIsolated('transport', pair.bus, ns);
      await removeIsolated('store', pair.store, ns);
      await rm(dir, { recursive: true, force: true });
    }, 60_000);

    it.runIf(pair.storeChecks)(
      'lists runs by filter, as a table and as JSON pages joined by their cursor',
      { timeout: 90_000 },
      async () => {
        const listed = await Promise.all(
          [0, 1, 2, 3, 4].map((n) => start({ steps: 1, delayMs: 0 }, `list-${n}`)),
        );
        for (const runId of listed) expect(await finished(runId)).toBe('completed');

        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const args = ['runs', 'list', '--json', '--workflow', 'cli_steps', '--status', 'completed'];
          args.push('--key-prefix', 'list-', '--order', 'oldest', '--limit', '2');
          const page = await baton(...args, ...(cursor !== undefined ? ['--cursor', cursor] : []));
          expect(page.code, page.stderr).toBe(0);
          const parsed = JSON.parse(page.stdout) as { runs: { runId: string }[]; cursor?: string };
          seen.push(...parsed.runs.map((r) => r.runId));
          cursor = parsed.cursor;
          pages++;
        } while (cursor !== undefined && pages < 10);
        expect(pages).toBe(3);
        expect(seen).toHaveLength(5);
        expect([...seen].sort()).toEqual([...listed].sort());

        const table = await baton('runs', 'list', '--key-prefix', 'list-', '--limit', '3');
        expect(table.code, table.stderr).toBe(0);
        expect(table.stdout).toContain('cli_steps@1');
        expect(table.stdout).toMatch(/3 run\(s\); next page: --cursor \S+/);
        const none = await baton('runs', 'list', '--json', '--key-prefix', 'list-', '--status', 'failed');
        expect(JSON.parse(none.stdout)).toEqual({ runs: [] });
      },
    );

    it(
      'refuses bad input with exit codes and messages that say what to do, changing nothing',
      { timeout: 90_000 },
      async () => {
        const unknown = await baton('runs', 'describe', 'no-such-run');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(/no run no-such-run in this store: check the id/);

        const cursor = await baton('runs', 'list', '--cursor', 'not-a-cursor');
        expect(cursor.code).toBe(2);
        expect(cursor.stderr).toMatch(/cursor is malformed .* start the listing again without a cursor/);

        const filter = await baton('runs', 'list', '--status', 'finished');
        expect(filter.code).toBe(2);
        expect(filter.stderr).toMatch(/status 'finished' is not a run status/);

        const done = await start({ steps: 1, delayMs: 0 }, 'state-0');
        expect(await finished(done)).toBe('completed');
        const retry = await baton('runs', 'retry', done);
        expect(retry.code).toBe(1);
        expect(retry.stderr).toMatch(
          new RegExp(
            `runs retry ${done}: retry takes runs that are failed, and this one is completed; nothing was changed`,
          ),
        );
        const cancel = await baton('runs', 'cancel', done);
        expect(cancel.code).toBe(1);
        expect(cancel.stderr).toMatch(
          /cancel takes runs that are pending, running, suspended, and this one is completed/,
        );
        expect((await client.describe(done)).status).toBe('completed');

        // A message that is not a run message: the worker dead-letters it as unparseable.
        await adapters.transport.runQueue.enqueue(new TextEncoder().encode('{"kind":"nonsense"'), {
          key: 'garbage',
        });
        const letter = await until('the unparseable letter', async () =>
          (await client.deadLetters.list()).letters.find((l) => l.code === 'unparseable'),
        );
        const redrive = await baton('dlq', 'redrive', letter.id);
        expect(redrive.code).toBe(1);
        expect(redrive.stderr).toMatch(
          new RegExp(`dead letter ${letter.id} is not redriven: unparseable run message .* purge it`),
        );
        const shown = await baton('dlq', 'show', letter.id, '--json');
        expect(shown.code, shown.stderr).toBe(0);
        expect(JSON.parse(shown.stdout)).toMatchObject({
          id: letter.id,
          code: 'unparseable',
          message: { readable: false },
        });
        const purged = await baton('dlq', 'purge', letter.id);
        expect(purged).toMatchObject({ code: 0, stdout: 'purged 1 letter(s)\n' });
      },
    );

    it(
      'retries failed runs in bulk: a dry-run count, then --yes after the fix, and they complete',
      { timeout: 90_000 },
      async () => {
        const fix = join(dir, `fixed-${pair.name}`);
        const failing = await Promise.all(
          [0, 1, 2].map((n) => start({ steps: 2, delayMs: 0, fixedWhen: fix }, `flaky-${n}`)),
        );
        for (const runId of failing) expect(await finished(runId)).toBe('failed');

        const dry = await baton('runs', 'retry', '--key-prefix', 'flaky-');
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toBe('3 run(s) match; nothing done (dry run). Add --yes to retry them.\n');
        for (const runId of failing) expect((await client.describe(runId)).status).toBe('failed');

        await writeFile(fix, 'fixed');
        const act = await baton('runs', 'retry', '--key-prefix', 'flaky-', '--yes');
        expect(act.code, act.stderr).toBe(0);
        expect(act.stderr).toContain('retry: 3 run(s) match');
        expect(act.stderr).toContain('retry: 3/3 (3 done, 0 refused, 0 failed)');
        expect(act.stdout).toContain('retry: 3 matched, 3 done, 0 refused, 0 failed');
        for (const runId of failing) {
          expect(await finished(runId)).toBe('completed');
          expect(await client.result(runId)).toBe(1);
        }

        const again = await baton('runs', 'retry', '--key-prefix', 'flaky-', '--yes', '--json');
        expect(again.code, again.stderr).toBe(0);
        expect(JSON.parse(again.stdout)).toMatchObject({
          matched: 0,
          succeeded: [],
          refused: [],
          failed: [],
        });
      },
    );

    it.runIf(pair.storeChecks)(
      'describes a parent with its child workflow and the child with its parent',
      { timeout: 60_000 },
      async () => {
        const started = await baton('runs', 'start', 'cli_parent@1', '--input', '{"sleepMs":50}');
        expect(started.code, started.stderr).toBe(0);
        const parent = /^started run (\S+)\n$/.exec(started.stdout)![1]!;
        const child = await until('the child to wait for its signal', async () => {
          const [first] = await client.runs.children(parent);
          if (first === undefined) return undefined;
          const history = await client.history(first.runId).catch(() => []);
          return history.some((p) => p.entry.type === 'SignalWaitStarted') ? first.runId : undefined;
        });
        const text = await baton('runs', 'describe', parent);
        expect(text.stdout).toMatch(new RegExp(`child +│? *${child} \\(cli_wait, (running|suspended)\\)`));
        const described = await baton('runs', 'describe', child, '--json');
        expect(JSON.parse(described.stdout)).toMatchObject({
          runId: child,
          parent: { runId: parent, seq: 0 },
        });
        expect((await baton('runs', 'signal', child, 'go', '--payload', '{"answer":7}')).code).toBe(0);
        expect(await finished(parent)).toBe('completed');
        expect(await client.result(parent)).toEqual({ answer: 7 });
        const after = JSON.parse((await baton('runs', 'describe', parent, '--json')).stdout) as {
          children: unknown;
        };
        expect(after.children).toEqual([{ runId: child, workflow: 'cli_wait', status: 'completed' }]);
      },
    );

    it(
      'starts, describes, signals, cancels, forks and deletes runs, and purges letters, through the binary',
      { timeout: 90_000 },
      async () => {
        const started = await baton(
          'runs',
          'start',
          'cli_wait@1',
          '--input',
          '{"sleepMs":200}',
          '--key',
          'wait-0',
        );
        expect(started.code, started.stderr).toBe(0);
        const waiting = /^started run (\S+)\n$/.exec(started.stdout)![1]!;
        await until('the run to wait for its signal', async () => {
          const history = await client.history(waiting).catch(() => []);
          return history.some((p) => p.entry.type === 'SignalWaitStarted') ? true : undefined;
        });
        const described = await baton('runs', 'describe', waiting, '--json');
        expect(JSON.parse(described.stdout)).toMatchObject({
          runId: waiting,
          workflow: 'cli_wait',
          idempotencyKey: 'wait-0',
          status: 'suspended',
        });
        // An update, answered by the run's handler; its id applied once; a refusal with its reason.
        const noted = await baton(
          'runs',
          'update',
          waiting,
          'note',
          '--args',
          '"first"',
          '--update-id',
          'n1',
          '--json',
        );
        expect(noted.code, noted.stderr).toBe(0);
        expect(JSON.parse(noted.stdout)).toEqual({
          runId: waiting,
          updateId: 'n1',
          status: 'completed',
          result: 1,
        });
        const noteAgain = await baton(
          'runs',
          'update',
          waiting,
          'note',
          '--args',
          '"first"',
          '--update-id',
          'n1',
        );
        expect(noteAgain).toMatchObject({
          code: 0,
          stdout: `update 'note' (id n1) of run ${waiting} answered: 1\n`,
        });
        const blank = await baton('runs', 'update', waiting, 'note', '--args', '""', '--timeout', '20s');
        expect(blank.code).toBe(1);
        expect(blank.stderr).toMatch(
          /BATON_UPDATE_REJECTED: .*rejected by its validator: a note is a non-empty string/,
        );
        // Its query, answered by a worker replaying it (nobody holds a suspended run).
        const queried = await baton('runs', 'query', waiting, 'stage', '--json');
        expect(JSON.parse(queried.stdout)).toEqual({
          runId: waiting,
          query: 'stage',
          result: 'waiting for go',
        });
        expect(await baton('runs', 'query', waiting, 'stage')).toMatchObject({
          code: 0,
          stdout: '"waiting for go"\n',
        });
        const unknown = await baton('runs', 'query', waiting, 'stag', '--args', '{"x":1}');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(
          /BATON_UNKNOWN_QUERY: run \S+ has no handler for query 'stag': it registers 'stage'/,
        );
        expect((await baton('runs', 'query', waiting, 'stage', '--args', '{oops')).code).toBe(2);
        const signalled = await baton('runs', 'signal', waiting, 'go', '--payload', '{"answer":42}');
        expect(signalled).toMatchObject({ code: 0, stdout: `signal 'go' sent to run ${waiting}\n` });
        expect(await finished(waiting)).toBe('completed');
        expect(await client.result(waiting)).toEqual({ answer: 42 });
        const late = await baton('runs', 'signal', waiting, 'go');
        expect(late.code).toBe(1);
        expect(late.stderr).toMatch(/is completed; a signal to a finished run is dropped, so none was sent/);
        const lateUpdate = await baton('runs', 'update', waiting, 'note', '--args', '"late"');
        expect(lateUpdate.code).toBe(1);
        expect(lateUpdate.stderr).toMatch(/has finished \(completed\); a finished run takes no updates/);
        const timeline = await baton('runs', 'history', waiting, '--wide');
        expect(timeline.stdout).toMatch(/timer 0 .* fired/);
        expect(timeline.stdout).toMatch(/signal 1 'go' .* received/);

        // Cancel one run by id, and the rest of a batch in bulk.
        const slow = await Promise.all([0, 1, 2].map((n) => start({ steps: 50, delayMs: 200 }, `slow-${n}`)));
        for (const runId of slow)
          await until(`run ${runId} to run`, async () =>
            (await client.describe(runId).catch(() => undefined))?.status === 'running' ? true : undefined,
          );
        const one = await baton('runs', 'cancel', slow[0]!, '--reason', 'operator test');
        expect(one).toMatchObject({ code: 0, stdout: `cancellation requested: run ${slow[0]}\n` });
        const dry = await baton('runs', 'cancel', '--key-prefix', 'slow-', '--json');
        expect(JSON.parse(dry.stdout)).toMatchObject({ action: 'cancel', dryRun: true });
        const bulk = await baton('runs', 'cancel', '--key-prefix', 'slow-', '--yes', '--reason', 'bulk test');
        expect(bulk.code, bulk.stderr).toBe(0);
        for (const runId of slow) expect(await finished(runId)).toBe('cancelled');
        expect((await client.describe(slow[0]!)).error?.message).toBe('operator test');

        const forked = await baton('runs', 'fork', waiting, '--from-position', '0', '--json');
        expect(forked.code, forked.stderr).toBe(0);
        expect(JSON.parse(forked.stdout)).toMatchObject({ forkedFrom: waiting });

        const deleteDry = await baton('runs', 'delete', '--key-prefix', 'slow-');
        expect(deleteDry.stdout).toBe('3 run(s) match; nothing done (dry run). Add --yes to delete them.\n');
        const deleted = await baton('runs', 'delete', '--key-prefix', 'slow-', '--yes', '--json');
        expect(JSON.parse(deleted.stdout)).toMatchObject({
          action: 'delete',
          matched: 3,
          refused: [],
          failed: [],
        });
        const gone = await baton('runs', 'describe', slow[1]!);
        expect(gone.code).toBe(1);
        const again = await baton('runs', 'delete', slow[1]!);
        expect(again.code).toBe(1);
        expect(again.stderr).toMatch(new RegExp(`no run ${slow[1]} in this store`));

        await adapters.transport.runQueue.enqueue(new TextEncoder().encode('not a run message'), {
          key: 'garbage-2',
        });
        await until('the second unparseable letter', async () =>
          (await client.deadLetters.list()).letters.find((l) => l.code === 'unparseable'),
        );
        const purgeDry = await baton('dlq', 'purge', '--all');
        expect(purgeDry.stdout).toMatch(/^[1-9]\d* letter\(s\) match; nothing done \(dry run\)/);
        const purgeUnknown = await baton('dlq', 'purge', 'no-such-letter');
        expect(purgeUnknown.code).toBe(1);
        expect(purgeUnknown.stderr).toMatch(/1 of the ids name no letter/);
      },
    );

    it(
      'shows both epochs of a run whose worker was SIGKILLed, then redrives a poison message that was fixed',
      { timeout: 120_000 },
      async () => {
        // A start for a workflow the first worker does not have: dead-lettered as unknown-workflow.
        const late = (await client.start({ name: 'cli_late', version: 1 }, { n: 21 })).runId;
        await until('the unknown-workflow letter', async () =>
          (await client.deadLetters.list()).letters.find((l) => l.code === 'unknown-workflow'),
        );

        // Redriven by hand while no worker has the workflow: it comes back as a dead letter.
        const dry = await baton('dlq', 'redrive', '--all', '--code', 'unknown-workflow');
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toBe('1 letter(s) match; nothing done (dry run). Add --yes to redrive them.\n');
        const firstLetter = (await client.deadLetters.list()).letters.find(
          (l) => l.code === 'unknown-workflow',
        )!;
        const redrive = await baton('dlq', 'redrive', '--all', '--code', 'unknown-workflow', '--yes');
        expect(redrive.code, redrive.stderr).toBe(0);
        expect(redrive.stdout).toContain('redrive: 1 matched, 1 done, 0 refused, 0 failed');
        await until('the start dead-lettered again', async () =>
          (await client.deadLetters.list()).letters.find(
            (l) => l.code === 'unknown-workflow' && l.id !== firstLetter.id,
          ),
        );

        const runId = await start({ steps: 6, delayMs: 300 }, 'killed-0');
        await until('two steps done under the first worker', async () => {
          const done = (await client.history(runId)).filter((p) => p.entry.type === 'ActivityCompleted');
          return done.length >= 2 ? true : undefined;
        });
        first.signal('SIGKILL');
        await first.exited;
        // The replacement has the fix: the workflow the first worker lacked. It redrives the dead
        // letter of that workflow by itself when it starts.
        await fleet.spawn({ BATON_WORKER_ID: `${ns}-second`, BATON_WORKFLOWS: WORKFLOWS_LATE });
        expect(await finished(runId)).toBe('completed');
        expect(await finished(late)).toBe('completed');
        expect(await client.result(late)).toBe(42);

        // --wide: every column (the time of each item) and every value whole (the keys).
        const history = await baton('runs', 'history', runId, '--wide');
        expect(history.code, history.stderr).toBe(0);
        // Every owner is named, the first one too: on NATS and the Redis bus its LeaseAcquired rides
        // at the head of its first record, on Kafka it is a record of its own.
        const firstWorker = `${ns}-first`;
        expect(history.stdout).toContain(`${firstWorker} / 1`);
        expect(history.stdout).toContain(`${ns}-second / 2`);
        expect(history.stdout).toContain('takeover (failover)');
        expect(history.stdout).toContain(`key ${runId}:0`);
        expect(history.stdout).toContain(`key ${runId}:5`);
        expect(history.stdout).toMatch(/failovers: 1/);

        const asJson = await baton('runs', 'history', runId, '--json');
        const timeline = JSON.parse(asJson.stdout) as RunTimeline;
        expect(timeline.epochs).toEqual([
          { epoch: 1, workerId: firstWorker },
          { epoch: 2, workerId: `${ns}-second` },
        ]);
        const activities = timeline.items.filter((i) => i.kind === 'activity');
        expect(activities.map((a) => a.seq)).toEqual([0, 1, 2, 3, 4, 5]);
        expect(activities[0]).toMatchObject({
          workerId: firstWorker,
          epoch: 1,
          outcome: 'completed',
          attempts: 1,
        });
        expect(activities[5]).toMatchObject({ workerId: `${ns}-second`, epoch: 2, outcome: 'completed' });
        expect(timeline.items.filter((i) => i.kind === 'end')).toEqual([
          expect.objectContaining({ outcome: 'completed', epoch: 2, workerId: `${ns}-second` }),
        ]);
        expect(timeline.failovers).toBe(1);

        const left = await baton('dlq', 'list', '--json', '--code', 'unknown-workflow');
        expect(JSON.parse(left.stdout).letters).toEqual([]);
      },
    );

    it(
      'lists the workers and the backlog; keeps a run paused across a SIGKILL of its owner until resumed; pauses and resumes in bulk',
      { timeout: 150_000 },
      async () => {
        const third = await fleet.spawn({ BATON_WORKER_ID: `${ns}-third`, BATON_WORKFLOWS: WORKFLOWS_LATE });
        const workers = await until('both live workers reported', async () => {
          const listed = await baton('workers', '--json');
          expect(listed.code, listed.stderr).toBe(0);
          const reported = JSON.parse(listed.stdout) as { workerId: string }[];
          return reported.some((w) => w.workerId === `${ns}-third`) ? reported : undefined;
        });
        expect(workers.map((w) => w.workerId)).toEqual([`${ns}-second`, `${ns}-third`]);
        expect(workers[0]).toMatchObject({
          workflows: [
            { name: 'cli_late', versions: [1] },
            { name: 'cli_steps', versions: [1] },
            { name: 'cli_wait', versions: [1] },
          ],
          draining: false,
        });
        const workersTable = await baton('workers', '--wide');
        expect(workersTable.stdout).toContain(`${ns}-third`);
        expect(workersTable.stdout).toContain('cli_steps@1');
        expect(workersTable.stdout).toMatch(/2 worker\(s\)/);
        const backlog = await baton('backlog', '--json');
        expect(backlog.code, backlog.stderr).toBe(0);
        const parts = JSON.parse(backlog.stdout) as { total: number; parts: { pending: number }[] };
        expect(parts.parts.length).toBeGreaterThan(0);
        expect(parts.total).toBe(parts.parts.reduce((n, p) => n + p.pending, 0));
        expect((await baton('backlog')).stdout).toMatch(/run message\(s\) waiting/);

        // Pause a running run, then SIGKILL its owner: the survivor reaps the lease, and its claim
        // finds the pause and leaves the run paused.
        // Steps long enough for the pause to land mid-run on a loaded machine (CI saw 8 x 400 ms end first).
        const runId = await start({ steps: 8, delayMs: 1_000 }, 'paused-0');
        const owner = await until('a step done', async () => {
          const run = await client.describe(runId).catch(() => undefined);
          const done = (await client.history(runId)).some((p) => p.entry.type === 'ActivityCompleted');
          return done && run?.lease?.owner ? run.lease.owner : undefined;
        });
        const pause = await baton('runs', 'pause', runId, '--reason', 'look first');
        expect(pause.code, pause.stderr).toBe(0);
        expect(pause.stdout).toMatch(new RegExp(`^run ${runId}: (paused|pause requested)`));
        const victim = owner === `${ns}-third` ? third : fleet.alive.find((w) => w !== third)!;
        const survivor = owner === `${ns}-third` ? `${ns}-second` : `${ns}-third`;
        victim.signal('SIGKILL');
        await victim.exited;
        await until('the run paused', async () =>
          (await client.describe(runId)).status === 'paused' ? true : undefined,
        );
        const completed = async () =>
          (await client.history(runId)).filter((p) => p.entry.type === 'ActivityCompleted').length;
        const stepsAtPause = await completed();
        // Four lease periods: reapers and the survivor's claims all pass by; the run stays put.
        await new Promise((r) => setTimeout(r, 6_000));
        expect((await client.describe(runId)).status).toBe('paused');
        expect(await completed()).toBe(stepsAtPause);
        const listed = await baton('runs', 'list', '--status', 'paused', '--json');
        expect(
          (JSON.parse(listed.stdout) as { runs: { runId: string }[] }).runs.map((r) => r.runId),
        ).toContain(runId);
        const described = await baton('runs', 'describe', runId);
        expect(described.stdout).toMatch(/paused\s.*look first/);

        const resume = await baton('runs', 'resume', runId);
        expect(resume).toMatchObject({ code: 0 });
        expect(resume.stdout).toMatch(/resumed/);
        expect(await finished(runId)).toBe('completed');
        expect(await client.result(runId)).toBe(28);
        const seqs = (await client.history(runId))
          .map((p) => p.entry)
          .filter((e) => e.type === 'ActivityCompleted')
          .map((e) => (e as { seq: number }).seq);
        expect(seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        const ends = (await client.runs.timeline(runId)).items.filter((i) => i.kind === 'end');
        expect(ends).toEqual([expect.objectContaining({ outcome: 'completed', workerId: survivor })]);
        const again = await baton('runs', 'resume', runId);
        expect(again.code).toBe(1);

        // In bulk: two runs waiting for a signal are paused at once, then resumed, then signalled.
        const waiting = await Promise.all(
          [0, 1].map(
            async (n) =>
              (
                await client.start(
                  { name: 'cli_wait', version: 1 },
                  { sleepMs: 10 },
                  { idempotencyKey: `bulk-pause-${n}` },
                )
              ).runId,
          ),
        );
        for (const id of waiting)
          await until(`run ${id} waiting`, async () =>
            (await client.describe(id).catch(() => undefined))?.status === 'suspended' ? true : undefined,
          );
        const dry = await baton('runs', 'pause', '--key-prefix', 'bulk-pause-');
        expect(dry.stdout).toBe('2 run(s) match; nothing done (dry run). Add --yes to pause them.\n');
        const paused = await baton('runs', 'pause', '--key-prefix', 'bulk-pause-', '--yes', '--json');
        expect(JSON.parse(paused.stdout)).toMatchObject({
          action: 'pause',
          matched: 2,
          refused: [],
          failed: [],
        });
        for (const id of waiting) expect((await client.describe(id)).status).toBe('paused');
        const resumed = await baton(
          'runs',
          'resume',
          '--status',
          'paused',
          '--key-prefix',
          'bulk-pause-',
          '--yes',
          '--json',
        );
        expect(JSON.parse(resumed.stdout)).toMatchObject({
          action: 'resume',
          matched: 2,
          refused: [],
          failed: [],
        });
        for (const id of waiting) await client.signal(id, 'go', { answer: 7 });
        for (const id of waiting) {
          expect(await finished(id)).toBe('completed');
          expect(await client.result(id)).toEqual({ answer: 7 });
        }
      },
    );

    it.runIf(pair.storeChecks)(
      'gates the removal of a version on its drain: exit 1 while a run needs it, 0 once none does',
      // A dozen `baton` processes in a row: 10-15 s on a quiet machine, more beside another spec.
      { timeout: 60_000 },
      async () => {
        // Runs of cli_wait@1 the earlier tests left waiting are cancelled first: one run needs it.
        const left = await client.runs.list({
          workflow: 'cli_wait',
          status: ['pending', 'running', 'suspended', 'paused'],
          limit: 1_000,
        });
        for (const run of left.runs) await client.cancel(run.runId, 'drain test');
        for (const run of left.runs) expect(await finished(run.runId)).toBe('cancelled');
        const runId = (
          await client.start({ name: 'cli_wait', version: 1 }, { sleepMs: 10 }, { idempotencyKey: 'drain-0' })
        ).runId;
        await until(`run ${runId} waiting`, async () =>
          (await client.describe(runId).catch(() => undefined))?.status === 'suspended' ? true : undefined,
        );
        const needed = await baton('versions', '--drained', 'cli_wait@1');
        expect(needed.code, needed.stderr).toBe(1);
        expect(needed.stdout).toMatch(
          /^cli_wait@1: not drained: unfinished runs suspended 1, 0 dead-lettered/,
        );
        const holders = (await client.fleet.workers())
          .filter((w) => w.workflows.some((wf) => wf.name === 'cli_wait' && wf.versions.includes(1)))
          .map((w) => w.workerId);
        expect(holders.length).toBeGreaterThan(0);
        const listing = JSON.parse((await baton('versions', '--json')).stdout) as {
          versions: { workflow: string; version: number; drained: boolean; workers: string[] }[];
          complete: boolean;
        };
        expect(listing.complete).toBe(true);
        expect(listing.versions.find((v) => v.workflow === 'cli_wait')).toMatchObject({
          version: 1,
          drained: false,
          workers: holders,
        });
        expect((await baton('workers', '--wide')).stdout).toMatch(/cli_wait@1 .*in use/);

        // The pipeline's wait: it keeps asking while the run finishes, then exits 0.
        const gate = baton('versions', '--drained', 'cli_wait@1', '--wait', '60s', '--interval', '200ms');
        await client.signal(runId, 'go', { answer: 1 });
        const drained = await gate;
        expect(drained.code, drained.stderr).toBe(0);
        expect(drained.stdout).toMatch(/^cli_wait@1: drained \(no unfinished run, no dead-lettered start\)/);
        expect((await baton('versions', '--workflow', 'cli_wait')).stdout).toMatch(/cli_wait@1 .*drained/);

        const unknown = await baton('versions', '--drained', 'cli_gone@4');
        expect(unknown).toMatchObject({ code: 0 });
        expect(unknown.stdout).toMatch(/cli_gone@4: drained .*no live worker has it/);
        const malformed = await baton('versions', '--drained', 'cli_wait');
        expect(malformed.code).toBe(2);
        expect(malformed.stderr).toMatch(/give <workflow>@<version>/);
      },
    );

    it.runIf(pair.storeChecks)(
      'creates, lists, shows, updates, pauses, resumes and deletes a schedule whose due times the fleet fires',
      { timeout: 90_000 },
      async () => {
        const badCron = await baton('schedules', 'create', 'cli_steps@1', '--cron', '61 * * * *');
        expect(badCron.code).toBe(2);
        expect(badCron.stderr).toMatch(/cron expression '61 \* \* \* \*' is invalid/);
        const nightly = await baton(
          'schedules',
          'create',
          'cli_steps@1',
          '--id',
          'nightly',
          '--cron',
          '30 2 * * *',
          '--time-zone',
          'Europe/Paris',
          '--overlap',
          'queue-one',
          '--paused',
          '--input',
          '{"steps":1,"delayMs":0}',
        );
        expect(nightly.code, nightly.stderr).toBe(0);
        expect(nightly.stdout).toMatch(/^created schedule nightly; next due - \(paused\)/);
        const every = await baton(
          'schedules',
          'create',
          'cli_steps@1',
          '--id',
          'every-second',
          '--every',
          '1s',
          '--json',
          '--input',
          '{"steps":1,"delayMs":0}',
        );
        expect(every.code, every.stderr).toBe(0);
        expect(JSON.parse(every.stdout)).toMatchObject({
          scheduleId: 'every-second',
          spec: { everyMs: 1000 },
          revision: 1,
        });
        // The fleet fires it: a run keyed by the schedule and its due time completes.
        const runId = await until('a run of the schedule', async () => {
          const page = await client.runs.list({ idempotencyKeyPrefix: 'schedule:every-second:', limit: 1 });
          return page.runs[0]?.runId;
        });
        expect(await finished(runId)).toBe('completed');

        const table = await baton('schedules', 'list');
        expect(table.code, table.stderr).toBe(0);
        expect(table.stdout).toMatch(/every-second +│ cli_steps@1 +│ every 1s +│ active/);
        expect(table.stdout).toMatch(
          /nightly +│ cli_steps@1 +│ cron 30 2 \* \* \* \(Europe\/Paris\) +│ paused/,
        );
        const shown = await baton('schedules', 'show', 'nightly', '--next', '2', '--json');
        const upcoming = (JSON.parse(shown.stdout) as { upcoming: number[] }).upcoming;
        expect(
          upcoming.map((t) => new Date(t).toLocaleTimeString('en-GB', { timeZone: 'Europe/Paris' })),
        ).toEqual(['02:30:00', '02:30:00']);

        // Update: a new cron and zone (the next due times follow), nothing given refused, an unknown id refused.
        const updated = await baton(
          'schedules',
          'update',
          'nightly',
          '--cron',
          '15 4 * * 1-5',
          '--time-zone',
          'America/New_York',
          '--note',
          'weekdays',
        );
        expect(updated.code, updated.stderr).toBe(0);
        expect(updated.stdout).toMatch(/^updated schedule nightly \(revision 2\); next due - \(paused\)/);
        const reshown = JSON.parse(
          (await baton('schedules', 'show', 'nightly', '--next', '3', '--json')).stdout,
        ) as {
          upcoming: number[];
          note: string;
          spec: unknown;
        };
        expect(reshown.spec).toEqual({ cron: '15 4 * * 1-5', timeZone: 'America/New_York' });
        expect(reshown.note).toBe('weekdays');
        for (const t of reshown.upcoming) {
          const local = new Date(t).toLocaleString('en-US', {
            timeZone: 'America/New_York',
            weekday: 'short',
            hour: '2-digit',
            minute: '2-digit',
            hour12: false,
          });
          expect(local).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 04:15$/);
        }
        const nothing = await baton('schedules', 'update', 'nightly');
        expect(nothing.code).toBe(2);
        expect(nothing.stderr).toMatch(/nothing to update: give at least one of --cron/);
        const zoneAlone = await baton('schedules', 'update', 'nightly', '--time-zone', 'UTC');
        expect(zoneAlone.code).toBe(2);
        expect(zoneAlone.stderr).toMatch(/--time-zone goes with --cron/);
        const unknown = await baton('schedules', 'update', 'no-such-schedule', '--every', '5m');
        expect(unknown.code).toBe(1);
        expect(unknown.stderr).toMatch(/no-such-schedule/);

        const pause = await baton('schedules', 'pause', 'every-second');
        expect(pause.stdout).toBe('paused schedule every-second\n');
        const resume = await baton('schedules', 'resume', 'nightly');
        expect(resume.stdout).toMatch(/^resumed schedule nightly; next due /);
        expect((await baton('schedules', 'delete', 'nightly')).stdout).toBe('deleted schedule nightly\n');
        const gone = await baton('schedules', 'show', 'nightly');
        expect(gone.code).toBe(1);
        expect(gone.stderr).toMatch(/no schedule nightly in the store/);
        expect(await client.schedules.delete('every-second')).toBe(true);
      },
    );
  });
}

/**
 * `baton runs start` and the fleet (issue 33 item 4), on one pair only (CI time; the check reads
 * the store's fleet reports, the same call on every pair): a workflow@version no live worker
 * registers is refused with exit 1 naming the live versions, nothing sent; --allow-unregistered
 * sends it. A private namespace and one worker of its own, so no other test's letters mix in.
 */
function describeFleetCheck(): void {
  describe('baton runs start checks the live fleet (nats+redis)', { concurrent: false }, () => {
    const pair = PAIRS[0]!;
    const ns = `clistart${randomBytes(4).toString('hex')}`;
    const env: Record<string, string> = {
      BATON_TRANSPORT_URL: pair.bus,
      BATON_STORE_URL: pair.store,
      ...isolatedEnv('transport', pair.bus, ns),
      ...isolatedEnv('store', pair.store, ns),
    };
    // No grace: a start for a version no worker has is dead-lettered at once, so a sent one shows.
    const fleet = new WorkerFleet({
      ...env,
      BATON_WORKFLOWS: WORKFLOWS,
      BATON_MISSING_VERSION_GRACE_MS: '0',
    });
    const adapters = operatorAdapters(readOperatorConfig(env));
    const client = new Client({ transport: adapters.transport, store: adapters.store });
    const baton = (...args: string[]): Promise<Result> =>
      exec(process.execPath, [CLI_MAIN, ...args], { PATH: process.env.PATH, ...env }, 60_000);
    const letterRunIds = async (): Promise<string[]> =>
      (await client.deadLetters.list()).letters.map(
        (l) => (JSON.parse(new TextDecoder().decode(l.data)) as { runId: string }).runId,
      );

    beforeAll(async () => {
      await client.connect();
      await fleet.spawn({ BATON_WORKER_ID: `${ns}-w` });
      await until('the worker to report', async () =>
        (await client.fleet.workers()).length > 0 ? true : undefined,
      );
    }, 60_000);

    afterAll(async () => {
      await fleet.shutdown();
      await adapters.close();
      await removeIsolated('transport', pair.bus, ns);
      await removeIsolated('store', pair.store, ns);
    }, 60_000);

    it('exits 1 naming the live versions for a workflow@version no live worker registers; --allow-unregistered starts it', async () => {
      const input = JSON.stringify({ steps: 1, delayMs: 1 });
      const refused = await baton('runs', 'start', 'cli_steps@2', '--input', input, '--run-id', 'refused-v2');
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(
        /^refused: no live worker registers cli_steps@2 \(the live workers register cli_steps@1\), so nothing was sent; .*--allow-unregistered.*\n$/,
      );
      const unknown = await baton('runs', 'start', 'cli_nothing@1', '--run-id', 'refused-name');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(
        /no live worker registers cli_nothing@1 \(none of the 1 live worker\(s\) registers workflow cli_nothing at any version\)/,
      );
      const malformed = await baton('runs', 'start', 'cli_steps@0');
      expect(malformed.code).toBe(2);
      expect(malformed.stderr).toMatch(/^usage: <workflow> version must be a positive integer/);

      const allowed = await baton(
        'runs',
        'start',
        'cli_steps@2',
        '--input',
        input,
        '--run-id',
        'allowed-v2',
        '--allow-unregistered',
      );
      expect(allowed).toMatchObject({ code: 0, stdout: 'started run allowed-v2\n' });
      // Sent: the worker dead-letters it (no grace); the refused ones were never sent.
      await until('the allowed start dead-lettered', async () =>
        (await letterRunIds()).includes('allowed-v2') ? true : undefined,
      );
      expect(await letterRunIds()).toEqual(['allowed-v2']);

      const registered = await baton(
        'runs',
        'start',
        'cli_steps@1',
        '--input',
        input,
        '--run-id',
        'registered-v1',
      );
      expect(registered).toMatchObject({ code: 0, stdout: 'started run registered-v1\n' });
      expect(await client.result('registered-v1', { timeoutMs: 30_000 })).toBe(0);
    }, 90_000);
  });
}

/**
 * The pairs run in two lanes at once, each lane one pair after another: every pair has a namespace
 * and a fleet of its own on the shared servers, and no test reads another's, so a lane changes
 * nothing a test checks; most of a pair's time is waits on its workers and on `baton` processes
 * (node starting up), which the other lane fills. Two lanes, not four: the parallel phase already
 * runs two spec files at once on this 2-core machine, and each lane's workers must still renew
 * their 1.5 s leases in time (a lease lost under load would move a run and change the epochs and
 * failovers that test 4 counts). The lanes hold about equal work.
 */
const LANES: Array<Array<() => void>> = [
  [() => describePair(PAIRS[0]!), () => describePair(PAIRS[3]!), describeFleetCheck],
  [() => describePair(PAIRS[1]!), () => describePair(PAIRS[2]!)],
];
for (const [index, lane] of LANES.entries()) {
  describe(`lane ${index + 1} of ${LANES.length}`, { concurrent: true }, () => {
    for (const describeOne of lane) describeOne();
  });
}
