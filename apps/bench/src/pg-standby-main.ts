/**
 * `npm run bench:pg-standby -- [--runs N] [--steps N] [--rounds N] [--out FILE]`: what waiting for a
 * synchronous standby costs per workflow step. Starts the test cluster (infra/clusters/postgres:
 * a primary with a synchronous standby behind the endpoint, on ports 15432, 15433 and 15440, so
 * never while the cluster crash spec runs), then runs the same workload once per
 * `synchronous_commit` level of the store's sessions: `local` is an asynchronous standby (the
 * primary acknowledges once its own WAL is flushed), the others wait for the standby.
 *
 * The bus is the in-memory one, so the figures are the store's: every step is a checkpointed
 * activity (one checkpoint commit per step), plus the lease, run and finish writes of each run.
 * Throughput: `runs` runs of `steps` steps at once; latency: one run of `steps` steps alone. The
 * levels take turns, round after round, so a neighbour's load on the machine falls on all of
 * them; the medians over the rounds are reported.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { memoryTransport } from '@baton/core/memory';
import { dropPostgresSchema, postgresStore, type SynchronousCommit } from '@baton/store-postgres';
import { startPostgresCluster } from '@baton/testing/clusters';
import { Worker } from '@baton/worker';
import { parseCommandArgs, runCommand, wholeNumber } from './command.js';

const USAGE = `Usage: npm run bench:pg-standby -- [--runs N] [--steps N] [--rounds N] [--out FILE]

  --runs N     concurrent runs per level (default 200)
  --steps N    checkpointed steps per run (default 10)
  --rounds N   rounds over all levels, interleaved; medians are reported (default 3)
  --out FILE   JSON report (default .tmp/bench/pg-standby-<time>.json)
  --help       this text

Starts and stops its own PostgreSQL cluster (ports 15432, 15433, 15440; PostgreSQL 15 binaries in
/usr/lib/postgresql/15/bin or BATON_PG_BIN).`;

const LEVELS: readonly SynchronousCommit[] = ['local', 'remote_write', 'on', 'remote_apply'];

interface Config {
  runs: number;
  steps: number;
  rounds: number;
  out: string;
}

interface LevelResult {
  synchronousCommit: SynchronousCommit;
  waitsForStandby: boolean;
  /** Median over the rounds. */
  stepsPerSecond: number;
  /** Median over the rounds. */
  msPerStepAlone: number;
  rounds: Array<{ stepsPerSecond: number; msPerStepAlone: number }>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function parse(argv: string[]): Config | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    runs: { type: 'string' },
    steps: { type: 'string' },
    rounds: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  return {
    runs: values.runs === undefined ? 200 : wholeNumber('--runs', values.runs),
    steps: values.steps === undefined ? 10 : wholeNumber('--steps', values.steps),
    rounds: values.rounds === undefined ? 3 : wholeNumber('--rounds', values.rounds),
    out: values.out ?? `.tmp/bench/pg-standby-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  };
}

const step = defineActivity({
  name: 'bench_step',
  checkpoint: true,
  run: async (n: number) => n + 1,
});

const chain = defineWorkflow({
  name: 'pg_standby_chain',
  version: 1,
  run: async (ctx, input: { steps: number }) => {
    let n = 0;
    for (let i = 0; i < input.steps; i++) n = await ctx.run(step, n);
    return n;
  },
});

/** Runs `runs` chains at once on a fresh schema; returns the seconds from first start to last result. */
async function timeRuns(url: string, level: SynchronousCommit, runs: number, steps: number): Promise<number> {
  const schema = `bench_sync_${randomBytes(4).toString('hex')}`;
  const store = postgresStore({ url, schema, synchronousCommit: level, poolSize: 10 });
  const transport = memoryTransport();
  const worker = new Worker({ transport, store, workflows: [chain], concurrency: runs, leaseMs: 10_000 });
  const client = new Client({ transport, store });
  try {
    await store.connect();
    await worker.start();
    const started = performance.now();
    const handles = [];
    for (let i = 0; i < runs; i++) handles.push(await client.start(chain, { steps }));
    const results = await Promise.all(handles.map((h) => h.result({ timeoutMs: 300_000 })));
    const seconds = (performance.now() - started) / 1000;
    if (results.some((r) => r !== steps)) throw new Error(`a run returned a wrong result at ${level}`);
    return seconds;
  } finally {
    await worker.stop();
    await store.close();
    await dropPostgresSchema({ url, schema });
  }
}

await runCommand(USAGE, parse, async (config) => {
  const cluster = await startPostgresCluster({ synchronous: true });
  const levels: LevelResult[] = [];
  try {
    console.log(
      `cluster up: ${cluster.url} (node ${cluster.primary} primary, node ${cluster.standby} synchronous standby)`,
    );
    // One untimed round first: the cluster's caches and the JIT warm up on it.
    await timeRuns(cluster.url, 'on', Math.min(config.runs, 20), config.steps);
    for (const level of LEVELS) {
      levels.push({
        synchronousCommit: level,
        waitsForStandby: level !== 'local',
        stepsPerSecond: 0,
        msPerStepAlone: 0,
        rounds: [],
      });
    }
    for (let round = 1; round <= config.rounds; round++) {
      for (const result of levels) {
        const level = result.synchronousCommit;
        const alone = await timeRuns(cluster.url, level, 1, config.steps);
        const together = await timeRuns(cluster.url, level, config.runs, config.steps);
        result.rounds.push({
          stepsPerSecond: (config.runs * config.steps) / together,
          msPerStepAlone: (alone * 1000) / config.steps,
        });
        console.log(`round ${round} ${level}: ${JSON.stringify(result.rounds.at(-1))}`);
      }
    }
    console.log(
      `\n${config.runs} runs x ${config.steps} checkpointed steps, medians of ${config.rounds} rounds`,
    );
    for (const result of levels) {
      result.stepsPerSecond = median(result.rounds.map((r) => r.stepsPerSecond));
      result.msPerStepAlone = median(result.rounds.map((r) => r.msPerStepAlone));
      console.log(
        `${result.synchronousCommit.padEnd(12)} ${Math.round(result.stepsPerSecond).toLocaleString('en-US').padStart(7)} steps/s (all runs at once)   ` +
          `${result.msPerStepAlone.toFixed(2)} ms/step (one run alone)`,
      );
    }
  } finally {
    await cluster.stop();
  }
  const out = resolve(config.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, runs: config.runs, steps: config.steps, rounds: config.rounds, levels }, null, 2)}\n`,
  );
  console.log(`\nJSON report: ${out}`);
});
