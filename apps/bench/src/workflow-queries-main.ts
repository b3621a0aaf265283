/**
 * `npm run bench:workflow-queries -- [options]`: the latency of `client.query` (docs/queries.md)
 * on the real bus and store, for
 * - a held run: its worker holds it (its step waits on a gate) and answers from memory, one
 *   round trip through the store's query mailbox;
 * - an unheld run: suspended on a signal after `--steps` steps, answered by a worker that claims
 *   the query and replays the run's journal (checkpoint and tail read, replay, answer).
 * Queries are asked one after another by a client in this process, with `--workers` in-process
 * workers; printed: p50, p95, p99 and max per kind, and the command that produced them. A
 * benchmark, not a test: it asserts only that every answer is right, nothing about timings.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@baton/client';
import { defineActivity, defineQuery, defineSignal, defineWorkflow } from '@baton/core';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { busAndStore, parseCommandArgs, runCommand, wholeNumber } from './command.js';
import { benchEnvironment } from './environment.js';
import type { BusKind, StoreKind } from './types.js';

const USAGE = `Usage: npm run bench:workflow-queries -- [options]

  --transport nats|kafka|redis   the bus (default nats)
  --store redis|postgres   the store (default redis)
  --queries N              queries of each kind (default 300)
  --steps N                steps in the unheld run's journal (default 20)
  --workers N              in-process workers (default 2)
  --help                   this text`;

interface QueryBenchConfig {
  transport: BusKind;
  store: StoreKind;
  queries: number;
  steps: number;
  workers: number;
}

function parse(argv: string[]): QueryBenchConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    transport: { type: 'string', default: 'nats' },
    store: { type: 'string', default: 'redis' },
    queries: { type: 'string' },
    steps: { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const { transport, store } = busAndStore(values);
  const count = (flag: 'queries' | 'steps' | 'workers', fallback: number): number => {
    const raw = values[flag];
    return typeof raw === 'string' ? wholeNumber(`--${flag}`, raw) : fallback;
  };
  return {
    transport,
    store,
    queries: count('queries', 300),
    steps: count('steps', 20),
    workers: count('workers', 2),
  };
}

const progress = defineQuery<number>('progress');
const release = defineSignal<null>('release');
/** Opened by the bench when it is done with the held run. */
let openGate: () => void = () => undefined;
const gate = new Promise<void>((resolve) => (openGate = resolve));

const step = defineActivity({ name: 'bench_query_step', run: (i: number) => i });
const wait = defineActivity({ name: 'bench_query_wait', run: async () => gate });

/** `steps` steps, then (held) a step that waits on the gate, or (unheld) a signal wait. */
const counter = defineWorkflow({
  name: 'bench_query_counter',
  version: 1,
  run: async (ctx, input: { steps: number; hold: boolean }) => {
    let done = 0;
    ctx.onQuery(progress, () => done);
    for (let i = 0; i < input.steps; i++) done += (await ctx.run(step, i)) >= 0 ? 1 : 0;
    if (input.hold) await ctx.run(wait, null);
    else await ctx.waitForSignal(release);
    return done;
  },
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

await runCommand(USAGE, parse, async (config) => {
  // The shared test servers, in a namespace of this run's own (removed at the end).
  const servers = { natsUrl: natsTestUrl(), kafkaUrl: kafkaTestUrl(), redisUrl: redisTestUrl() };
  const env = await benchEnvironment({
    transport: config.transport,
    store: config.store,
    urls: { ...servers, postgresUrl: postgresTestUrl() },
  });
  await Promise.all([env.transport.connect(), env.store.connect()]);
  const adapters = { transport: env.transport, store: env.store };
  const { transport, store } = adapters;
  const client = new Client(adapters);
  // A long lease: the held run stays with its worker for the whole measurement.
  const workers: Worker[] = [];
  for (let i = 0; i < config.workers; i++)
    workers.push(new Worker({ ...adapters, workflows: [counter], leaseMs: 30_000 }));
  try {
    await client.connect();
    for (const worker of workers) await worker.start();
    console.log(
      `$ npm run bench:workflow-queries -- --transport ${config.transport} --store ${config.store} ` +
        `--queries ${config.queries} --steps ${config.steps} --workers ${config.workers}`,
    );
    const held = await client.start(counter, { steps: config.steps, hold: true });
    const unheld = await client.start(counter, { steps: config.steps, hold: false });
    for (const [handle, want] of [
      [held, 'held'],
      [unheld, 'suspended'],
    ] as const) {
      for (let tries = 0; ; tries++) {
        const run = await client.describe(handle.runId).catch(() => undefined);
        const ready = want === 'held' ? run?.lease?.state === 'held' : run?.status === 'suspended';
        if (ready && (await handle.query(progress)) === config.steps) break;
        if (tries > 600) throw new Error(`run ${handle.runId} never became ${want}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    console.log('run       queries   p50 ms   p95 ms   p99 ms   max ms');
    for (const [label, handle] of [
      ['held', held],
      ['unheld', unheld],
    ] as const) {
      // Warm-up: connections, subscriptions, JIT.
      for (let i = 0; i < 20; i++) await handle.query(progress);
      const ms: number[] = [];
      for (let i = 0; i < config.queries; i++) {
        const t0 = performance.now();
        const answer = await handle.query(progress);
        ms.push(performance.now() - t0);
        if (answer !== config.steps) throw new Error(`${label} run answered ${answer}, not ${config.steps}`);
      }
      ms.sort((a, b) => a - b);
      const cell = (v: number): string => v.toFixed(2).padStart(8);
      console.log(
        `${label.padEnd(8)}  ${String(config.queries).padStart(7)}  ${cell(percentile(ms, 50))} ${cell(percentile(ms, 95))} ` +
          `${cell(percentile(ms, 99))} ${cell(ms[ms.length - 1]!)}`,
      );
    }
    openGate();
    await client.signal(unheld.runId, release, null);
    await Promise.all([held.result({ timeoutMs: 60_000 }), unheld.result({ timeoutMs: 60_000 })]);
  } finally {
    openGate();
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await Promise.allSettled([transport.close(), store.close()]);
    await env.dispose().catch((err: unknown) => console.error(`cleanup of ${env.ns} failed: ${String(err)}`));
  }
});
