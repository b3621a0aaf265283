/**
 * `npm run bench:sentinel -- [--runs N] [--repeat N] [--url URL]`: what the Redis store's
 * replication guard (WAIT for a replica after every write that moves a run; store-redis
 * replication.ts) costs per durable step. One process runs a Worker and a Client on the shared
 * NATS and on a Redis primary + replica + 3 sentinels (started here with infra/clusters/redis on
 * start.sh's default ports, or the cluster `--url` names), and runs two workflows with the guard
 * off (BATON_REDIS_WAIT_REPLICAS=0) and on (=1), alternating:
 *
 * - chain10: 10 sequential steps, the store written at the claim and the finish only;
 * - chain10-checkpointed: the same with a checkpoint after every step, the guard's worst case.
 *
 * Each is run twice per mode: `--runs` runs enqueued at once (throughput, steps/s), and 20 runs
 * one after another (latency: ms per step of a lone run, where a WAIT's round trip is not hidden
 * behind other runs' work). Under them, the guard's own price: the mean time of one lease claim
 * (one guarded write), 1,000 in a row, with the guard off and on. A step costs that difference
 * times its guarded writes: 0.2 per step for chain10 (the claim and the finish of 10 steps), 1.2
 * for chain10-checkpointed. Nothing is asserted.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow, type WorkflowDefinition } from '@baton/core';
import { startRedisCluster, type RedisCluster } from '@baton/testing/clusters';
import { natsTestUrl } from '@baton/testing/servers';
import { loadAdapterCode, readConfig, storeFromConfig, transportFromConfig } from '@baton/host';
import { isolatedEnv, removeIsolated } from '@baton/host/testing';
import { chain10 } from './workflows.js';
import { Worker } from '@baton/worker';
import { parseCommandArgs, runCommand, wholeNumber } from './command.js';

const USAGE = `Usage: npm run bench:sentinel -- [--runs N] [--repeat N] [--url URL]

  --runs N     runs enqueued at once per workflow and mode (default 200)
  --repeat N   rounds; each round runs both workflows with the guard off, then on (default 2)
  --url URL    a running redis+sentinel:// cluster (default: start one with
               infra/clusters/redis on ports 16380-16381 and 26380-26382, stopped at the end)
  --help       this text

Bus: BATON_TEST_NATS_URL (the tests' variable and default).`;

const STEPS = 10;
/** Runs of the latency measurement, one after another. */
const SERIAL_RUNS = 20;
const checkpointedIncrement = defineActivity({
  name: 'increment_checkpointed',
  checkpoint: true,
  run: (x: number) => x + 1,
});

/** chain10 with a checkpoint after every step. */
const chain10Checkpointed = defineWorkflow({
  name: 'bench_chain10_checkpointed',
  version: 1,
  run: async (ctx, x: number) => {
    for (let i = 0; i < STEPS; i++) x = await ctx.run(checkpointedIncrement, x);
    return x;
  },
});

interface Config {
  runs: number;
  repeat: number;
  url: string | undefined;
}

function parse(argv: string[]): Config | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    repeat: { type: 'string' },
    url: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  return {
    runs: values.runs === undefined ? 200 : wholeNumber('--runs', values.runs),
    repeat: values.repeat === undefined ? 2 : wholeNumber('--repeat', values.repeat),
    url: values.url,
  };
}

/** Steps per second of `runs` runs of `workflow`, enqueued at once, on a fresh namespace. */
async function measure(
  storeUrl: string,
  waitReplicas: number,
  workflow: WorkflowDefinition<number, number>,
  runs: number,
  serial: boolean,
): Promise<number> {
  const natsUrl = natsTestUrl();
  const ns = `s${randomBytes(5).toString('hex')}`;
  const config = readConfig({
    BATON_TRANSPORT_URL: natsUrl,
    BATON_STORE_URL: storeUrl,
    BATON_WORKFLOWS: 'unused-in-process',
    BATON_REDIS_WAIT_REPLICAS: String(waitReplicas),
    ...isolatedEnv('transport', natsUrl, ns),
    ...isolatedEnv('store', storeUrl, ns),
  });
  await loadAdapterCode(config);
  const transport = transportFromConfig(config);
  const store = storeFromConfig(config);
  const client = new Client({ transport, store });
  const worker = new Worker({ transport, store, workflows: [workflow], concurrency: runs });
  try {
    await worker.start();
    const started = performance.now();
    const handles = [];
    for (let i = 0; i < runs; i++) {
      handles.push(await client.start(workflow, i));
      if (serial) await handles[i]!.result({ timeoutMs: 300_000 });
    }
    for (const [i, handle] of handles.entries()) {
      const result = await handle.result({ timeoutMs: 300_000 });
      if (result !== i + STEPS) throw new Error(`run ${handle.runId} returned ${String(result)}`);
    }
    return (runs * STEPS) / ((performance.now() - started) / 1000);
  } finally {
    await worker.stop();
    await Promise.allSettled([transport.close(), store.close()]);
    await removeIsolated('transport', natsUrl, ns);
    await removeIsolated('store', storeUrl, ns);
  }
}

/** Writes per round of the write measurement. */
const WRITES = 1_000;

/** Mean ms of one lease claim (a guarded write when waitReplicas > 0), WRITES in a row. */
async function measureWrites(storeUrl: string, waitReplicas: number): Promise<number> {
  const ns = `w${randomBytes(5).toString('hex')}`;
  const store = storeFromConfig(
    readConfig({
      BATON_TRANSPORT_URL: natsTestUrl(),
      BATON_STORE_URL: storeUrl,
      BATON_WORKFLOWS: 'unused-in-process',
      BATON_REDIS_WAIT_REPLICAS: String(waitReplicas),
      ...isolatedEnv('store', storeUrl, ns),
    }),
  );
  try {
    await store.connect();
    const started = performance.now();
    for (let i = 0; i < WRITES; i++) {
      const claimed = await store.leases.acquire(`run-${i}`, 'bench', 60_000);
      if (!claimed.ok) throw new Error(`claim of run-${i} was refused: ${claimed.reason}`);
    }
    return (performance.now() - started) / WRITES;
  } finally {
    await store.close();
    await removeIsolated('store', storeUrl, ns);
  }
}

await runCommand(USAGE, parse, async (config) => {
  let cluster: RedisCluster | undefined;
  try {
    if (config.url === undefined) {
      cluster = await startRedisCluster({
        ports: { data: [16380, 16381], sentinels: [26380, 26381, 26382] },
      });
    }
    const url = config.url ?? cluster!.url;
    console.log(`NATS ${natsTestUrl()} + ${url}, ${config.runs} runs at once, node ${process.version}`);
    const workflows = [
      ['chain10', chain10],
      ['chain10-checkpointed', chain10Checkpointed],
    ] as const;
    const totals = new Map<string, number[]>();
    for (let round = 1; round <= config.repeat; round++) {
      for (const waitReplicas of [0, 1]) {
        const ms = await measureWrites(url, waitReplicas);
        const key = `lease claim guard ${waitReplicas === 0 ? 'off' : 'on '} ms/write`;
        totals.set(key, [...(totals.get(key) ?? []), ms]);
        console.log(`round ${round}: ${key}: ${ms.toFixed(3)}`);
      }
      for (const [name, workflow] of workflows) {
        for (const waitReplicas of [0, 1]) {
          const guard = `guard ${waitReplicas === 0 ? 'off' : 'on '}`;
          const stepsPerSecond = await measure(url, waitReplicas, workflow, config.runs, false);
          const lone = await measure(url, waitReplicas, workflow, SERIAL_RUNS, true);
          const key = `${name} ${guard}`;
          totals.set(`${key} steps/s`, [...(totals.get(`${key} steps/s`) ?? []), stepsPerSecond]);
          totals.set(`${key} ms/step alone`, [...(totals.get(`${key} ms/step alone`) ?? []), 1000 / lone]);
          console.log(
            `round ${round}: ${key}: ${Math.round(stepsPerSecond).toLocaleString('en-US')} steps/s with ${config.runs} at once; ` +
              `${(1000 / lone).toFixed(2)} ms per step alone`,
          );
        }
      }
    }
    console.log('\nmean over rounds:');
    for (const [key, values] of totals) {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      console.log(`  ${key}: ${mean >= 100 ? Math.round(mean).toLocaleString('en-US') : mean.toFixed(3)}`);
    }
  } finally {
    await cluster?.stop();
  }
});
