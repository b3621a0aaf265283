/**
 * A query of a run whose holder is frozen (SIGSTOP: its process and its store connection stay, so
 * nothing tells the fleet it is gone, and its lease has long to run) is still answered within its
 * timeout: the holder does not answer, and another worker process answers by replaying the run's
 * journal (docs/queries.md). Real worker processes on NATS + Redis and on Kafka + Postgres.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@baton/client';
import type { CrashEnvironment } from '@baton/testing/crash';
import { pollUntil, REPO_ROOT, WorkerProcess } from '@baton/testing/crash';
import { crashEnvironment } from './crash-environment.spec-helper.js';
import {
  queryHolder,
  queryProgress,
  queryReplaying,
} from '../../../libs/testing/src/crash/query-workflows.js';

const QUERY_WORKFLOW_MODULE = resolve(REPO_ROOT, 'libs/testing/src/crash/query-workflows.ts');

/** A lease far longer than the test: the frozen holder keeps the run, nobody takes it over. */
const TIMING = { BATON_LEASE_MS: '60000', BATON_HEARTBEAT_MS: '5000' };

const PAIRS = [
  { name: 'nats+redis', factory: crashEnvironment('redis', 'nats') },
  { name: 'kafka+postgres', factory: crashEnvironment('postgres', 'kafka') },
];

let env: CrashEnvironment | undefined;
const processes: WorkerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.alive) {
      p.signal('SIGCONT');
      p.signal('SIGKILL');
    }
    await p.exited;
  }
  await env?.transport.close();
  await env?.store.close();
  await env?.dispose();
  env = undefined;
});

function spawnWorker(id: string): WorkerProcess {
  const worker = new WorkerProcess(id, {
    ...env!.workerEnv,
    ...TIMING,
    BATON_WORKFLOWS: QUERY_WORKFLOW_MODULE,
    BATON_WORKER_ID: id,
  });
  processes.push(worker);
  return worker;
}

for (const pair of PAIRS) {
  describe(`a query of a run held by a frozen worker (${pair.name})`, () => {
    it(
      'is answered by another worker process replaying the journal, within its timeout',
      { timeout: 120_000 },
      async () => {
        env = await pair.factory(`q${randomBytes(5).toString('hex')}`, {});
        await env.transport.connect();
        await env.store.connect();
        const client = new Client({ transport: env.transport, store: env.store });
        const first = spawnWorker('query-a');
        await first.ready();
        // One worker at first, so it takes the run; the second joins once the run is held.
        const run = await client.start(queryHolder, 120_000);
        await pollUntil(
          async () => (await client.describe(run.runId).catch(() => undefined))?.lease?.owner === 'query-a',
          30_000,
          () => `run ${run.runId} held by query-a\n${first.describe()}`,
        );
        const second = spawnWorker('query-b');
        await second.ready();
        // From the holder's memory while it runs: the first step done, the second under way.
        await pollUntil(
          async () => (await run.query(queryProgress)).stage === 'holding',
          30_000,
          () => `run ${run.runId} in its second step`,
        );
        expect(await run.query(queryReplaying)).toBe(false);

        first.signal('SIGSTOP');
        const askedAt = Date.now();
        const answer = await run.query(queryProgress, undefined, { timeoutMs: 15_000 });
        const tookMs = Date.now() - askedAt;
        expect(answer).toEqual({ stage: 'holding', done: ['first'] });
        expect(await run.query(queryReplaying, undefined, { timeoutMs: 15_000 })).toBe(true);
        // Still held by the frozen worker: the query moved nothing.
        expect((await client.describe(run.runId)).lease).toMatchObject({ state: 'held', owner: 'query-a' });
        console.log(
          `query of a run held by a SIGSTOPped worker (${pair.name}): answered by replay in ${tookMs} ms`,
        );
        first.signal('SIGCONT');
      },
    );
  });
}
