/**
 * `npm run bench:children -- [options]`: child workflows at scale. One parent run starts
 * `--children` children at once (each one durable step) and then waits for all of them; in-process workers on
 * the real bus and store run both. Reported per parent: the time to start every child, the time
 * until the parent completed, children completed per second, the workers' CPU per child, and how
 * many times the parent was claimed (each child's end may wake it: it then replays its journal).
 * What a run that uses no child workflow pays for the feature is measured with `npm run bench`
 * before and after (docs/performance.md, "Child workflows", has both). A benchmark, not a test:
 * it asserts nothing about timings.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { busAndStore, parseCommandArgs, runCommand, wholeNumber } from './command.js';
import { benchEnvironment } from './environment.js';
import type { BusKind, StoreKind } from './types.js';

const USAGE = `Usage: npm run bench:children -- [options]

  --transport nats|kafka|redis   the bus (default nats)
  --store redis|postgres   the store (default redis)
  --children N             children of each parent (default 1000)
  --parents N              parents, one after another (default 3)
  --workers N              in-process workers (default 1)
  --help                   this text`;

interface ChildrenBenchConfig {
  transport: BusKind;
  store: StoreKind;
  children: number;
  parents: number;
  workers: number;
}

function parse(argv: string[]): ChildrenBenchConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    transport: { type: 'string', default: 'nats' },
    store: { type: 'string', default: 'redis' },
    children: { type: 'string' },
    parents: { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const { transport, store } = busAndStore(values);
  const count = (flag: 'children' | 'parents' | 'workers', fallback: number): number => {
    const raw = values[flag];
    return typeof raw === 'string' ? wholeNumber(`--${flag}`, raw) : fallback;
  };
  return {
    transport,
    store,
    children: count('children', 1000),
    parents: count('parents', 3),
    workers: count('workers', 1),
  };
}

const increment = defineActivity({ name: 'increment', run: (x: number) => x + 1 });
const child = defineWorkflow({
  name: 'bench_child',
  version: 1,
  run: async (ctx, x: number) => ctx.run(increment, x),
});
/**
 * Starts every child at once (parallel steps, as a fan-out of activities), then awaits them all:
 * the children run in parallel on the workers, and the parent wakes for whichever ends have come.
 */
const parent = defineWorkflow({
  name: 'bench_parent',
  version: 1,
  run: async (ctx, input: { children: number }) => {
    const handles = await Promise.all(
      Array.from({ length: input.children }, (_, i) => ctx.startChild(child, i)),
    );
    const startedAt = ctx.now();
    const results = await Promise.all(handles.map((handle) => handle.result()));
    return { sum: results.reduce((a, b) => a + b, 0), startedAt };
  },
});

const cpuSeconds = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

await runCommand(USAGE, parse, async (config) => {
  const urls = {
    natsUrl: natsTestUrl(),
    kafkaUrl: kafkaTestUrl(),
    redisUrl: redisTestUrl(),
    postgresUrl: postgresTestUrl(),
  };
  const env = await benchEnvironment({ transport: config.transport, store: config.store, urls });
  const { transport, store } = env;
  await transport.connect();
  await store.connect();
  const client = new Client({ transport, store });
  const workers = Array.from(
    { length: config.workers },
    () => new Worker({ transport, store, workflows: [parent, child], concurrency: 1000 }),
  );
  try {
    await client.connect();
    for (const worker of workers) await worker.start();
    console.log(
      `child workflows on ${config.transport}+${config.store}: ${config.parents} parents of ${config.children} ` +
        `children each, ${config.workers} in-process worker(s); this process's CPU is the workers' and the client's`,
    );
    // Warm-up: connections, JIT.
    await (await client.start(parent, { children: 20 })).result({ timeoutMs: 60_000 });
    console.log('parent  start all (ms)  parent done (ms)  children/s  CPU ms per child  parent claims');
    for (let p = 1; p <= config.parents; p++) {
      const cpu = cpuSeconds();
      const t0 = performance.now();
      const startedAtWall = Date.now();
      const handle = await client.start(parent, { children: config.children });
      const result = (await handle.result({ timeoutMs: 600_000 })) as { sum: number; startedAt: number };
      const elapsedMs = performance.now() - t0;
      const expected = (config.children * (config.children + 1)) / 2;
      if (result.sum !== expected)
        throw new Error(`parent ${handle.runId}: sum ${result.sum}, expected ${expected}`);
      const cpuMs = (cpuSeconds() - cpu) * 1000;
      const claims = (await store.runs.get(handle.runId))?.attempts ?? 0;
      console.log(
        `${String(p).padStart(6)}  ${String(Math.round(result.startedAt - startedAtWall)).padStart(14)}  ` +
          `${String(Math.round(elapsedMs)).padStart(16)}  ${String(Math.round((config.children / elapsedMs) * 1000)).padStart(10)}  ` +
          `${(cpuMs / config.children).toFixed(2).padStart(16)}  ${String(claims).padStart(13)}`,
      );
    }
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await Promise.allSettled([transport.close(), store.close()]);
    await env.dispose().catch((err: unknown) => console.error(`cleanup of ${env.ns} failed: ${String(err)}`));
  }
});
