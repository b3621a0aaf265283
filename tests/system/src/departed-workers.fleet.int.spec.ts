/**
 * Departed workers through the real `baton` CLI, on NATS with Redis and on NATS with Postgres:
 * three worker processes, the first SIGKILLed while it holds runs, the second SIGTERMed while it
 * holds others; `baton workers --all` (apps/cli/dist/main.js, a process of its own) then lists the
 * first as expired and the second as handed-off, each with the runs it held and the third worker
 * that took them over, and lists only the third as live.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, type DepartedFleetWorker, type FleetWorker } from '@baton/client';
import type { CrashEnvironment } from '@baton/testing/crash';
import { pollUntil, REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { queryHolder } from '../../../libs/testing/src/crash/query-workflows.js';
import { crashEnvironment } from './crash-environment.spec-helper.js';

const CLI_MAIN = resolve(REPO_ROOT, 'apps/cli/dist/main.js');
const HOLDER_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/query-workflows.ts');

/**
 * A short lease, so the killed worker's report runs out within seconds (its time to live is a
 * lease here); two runs per worker, so the first two fill the first worker and the next two go to
 * the second; a short drain, so the SIGTERMed worker hands its runs off at once.
 */
const TIMING = {
  BATON_LEASE_MS: '3000',
  BATON_HEARTBEAT_MS: '500',
  BATON_CONCURRENCY: '2',
  BATON_DRAIN_TIMEOUT_MS: '300',
};

/** How long each run's second step holds its worker: longer than the test. */
const HOLD_MS = 120_000;

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'nats+postgres', factory: crashEnvironment('postgres', 'nats') },
];

let env: CrashEnvironment | undefined;
const processes: WorkerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.alive) p.signal('SIGKILL');
    await p.exited;
  }
  await env?.transport.close();
  await env?.store.close();
  await env?.dispose();
  env = undefined;
});

function spawnWorker(id: string, extra: Record<string, string> = {}): WorkerProcess {
  const worker = new WorkerProcess(id, {
    ...env!.workerEnv,
    ...TIMING,
    BATON_WORKFLOWS: HOLDER_MODULE,
    BATON_WORKER_ID: id,
    ...extra,
  });
  processes.push(worker);
  return worker;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** One `baton` command in a process of its own, configured like the workers. */
function baton(...args: string[]): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI_MAIN, ...args],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, ...env!.workerEnv },
        timeout: 60_000,
        encoding: 'utf8',
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

for (const pair of PAIRS) {
  describe(`departed workers in baton workers --all (${pair.name})`, () => {
    it(
      'lists a SIGKILLed worker as expired and a SIGTERMed one as handed-off, with their runs and where they went',
      { timeout: 150_000 },
      async () => {
        const tag = randomBytes(4).toString('hex');
        env = await pair.factory(`dw${tag}`, {});
        await env.transport.connect();
        await env.store.connect();
        const client = new Client({ transport: env.transport, store: env.store });
        const [killedId, stoppedId, takerId] = [`killed-${tag}`, `stopped-${tag}`, `taker-${tag}`];

        /** Starts two runs and waits until `owner` holds both. */
        async function heldBy(owner: string, worker: WorkerProcess): Promise<string[]> {
          const runs = await Promise.all([
            client.start(queryHolder, HOLD_MS),
            client.start(queryHolder, HOLD_MS),
          ]);
          const ids = runs.map((r) => r.runId);
          await pollUntil(
            async () => {
              const leases = await Promise.all(ids.map((id) => env!.store.leases.get(id)));
              return leases.every((l) => l?.state === 'held' && l.owner === owner);
            },
            30_000,
            () => `runs ${ids.join(', ')} held by ${owner}\n${worker.describe()}`,
          );
          return ids.sort();
        }

        const killed = spawnWorker(killedId);
        await killed.ready();
        const killedRuns = await heldBy(killedId, killed);
        const stopped = spawnWorker(stoppedId);
        await stopped.ready();
        const stoppedRuns = await heldBy(stoppedId, stopped);
        // Its runs' lists reach the store with its next report (a heartbeat).
        await pollUntil(
          async () => (await client.fleet.workers()).find((w) => w.workerId === killedId)?.runs?.length === 2,
          10_000,
          () => `a report of ${killedId} listing its runs`,
        );
        const taker = spawnWorker(takerId, { BATON_CONCURRENCY: '10' });
        await taker.ready();

        killed.signal('SIGKILL');
        stopped.signal('SIGTERM');
        expect(await stopped.exited).toEqual({ code: 0, signal: null });

        // Until the killed worker's report runs out (a lease after its last one) and the taker holds all four.
        let listed: { workers: FleetWorker[]; departed: DepartedFleetWorker[] } | undefined;
        await pollUntil(
          async () => {
            const ran = await baton('workers', '--all', '--json');
            if (ran.code !== 0)
              throw new Error(`baton workers --all --json exited ${ran.code}: ${ran.stderr}`);
            listed = JSON.parse(ran.stdout) as typeof listed;
            const departed = listed!.departed;
            return (
              departed.length === 2 &&
              departed.every((d) => d.heldRuns.every((r) => r.owner === takerId && r.status === 'running'))
            );
          },
          60_000,
          () =>
            `both departed, their runs on ${takerId}; last listing:\n${JSON.stringify(listed, null, 1)}\n${taker.describe()}`,
        );

        expect(listed!.workers.map((w) => w.workerId)).toEqual([takerId]);
        const byId = new Map(listed!.departed.map((d) => [d.workerId, d]));
        const gone = byId.get(killedId)!;
        const left = byId.get(stoppedId)!;
        expect(gone).toMatchObject({ ended: 'expired', runs: killedRuns, runsHeld: 2, pid: killed.pid });
        expect(left).toMatchObject({ ended: 'handed-off', runs: stoppedRuns, runsHeld: 2, draining: true });
        // Kept for the default retention, an hour from the end.
        expect(gone.keptUntil - gone.endedAt).toBe(3_600_000);
        expect(gone.endedAt).toBeGreaterThan(gone.lastSeenAt);
        expect(left.endedAt).toBe(left.lastSeenAt);
        // The one killed last was seen before the one that said goodbye ended.
        expect(gone.lastSeenAt).toBeLessThanOrEqual(left.endedAt);
        for (const d of [gone, left])
          expect(d.heldRuns).toEqual(d.runs!.map((runId) => ({ runId, status: 'running', owner: takerId })));

        // The table an operator reads.
        const table = await baton('workers', '--all', '--wide');
        expect(table.code).toBe(0);
        expect(table.stdout).toMatch(new RegExp(`${killedId} .*expired`));
        expect(table.stdout).toMatch(new RegExp(`${stoppedId} .*handed-off`));
        for (const runId of [...killedRuns, ...stoppedRuns])
          expect(table.stdout).toMatch(new RegExp(`${runId}\\W+running on ${takerId}`));
        expect(table.stdout).toContain('2 departed worker(s)');
        // Without --all, only the live ones, in the JSON shape of before.
        const live = await baton('workers', '--json');
        expect((JSON.parse(live.stdout) as FleetWorker[]).map((w) => w.workerId)).toEqual([takerId]);
        console.log(`departed workers (${pair.name}):\n${table.stdout}`);
      },
    );
  });
}
