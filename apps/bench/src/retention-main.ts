/**
 * `npm run bench:retention -- [options]`: does the retention sweep keep the store bounded at a
 * sustained completion rate? In-process workers (on the real bus and store) complete chain10 runs
 * started at `--rate` runs/s for `--seconds`, with `--retention-ms` as the finished runs' time to
 * live, then keep sweeping for the retention and two sweep periods more. Every second it prints
 * the runs completed and deleted in that second and the finished runs the store keeps; at the end
 * the completion and deletion rates, the most finished runs the store held, and what is left.
 * A benchmark, not a test: it asserts nothing about timings (docs/retention.md has the numbers).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { Client } from '@baton/client';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { busAndStore, parseCommandArgs, runCommand, wholeNumber } from './command.js';
import { benchEnvironment } from './environment.js';
import type { BusKind, StoreKind } from './types.js';
import { chain10 } from './workflows.js';

const USAGE = `Usage: npm run bench:retention -- [options]

  --transport nats|kafka|redis   the bus (default nats)
  --store redis|postgres   the store (default redis)
  --rate N                 chain10 runs started per second (default 700: the bench's chain10 rate on nats+redis)
  --seconds N              how long runs are started (default 30)
  --retention-ms N         time to live of finished runs (default 5000)
  --sweep-ms N             interval of the retention sweep (default 1000)
  --workers N              in-process workers (default 2)
  --help                   this text`;

interface RetentionBenchConfig {
  transport: BusKind;
  store: StoreKind;
  rate: number;
  seconds: number;
  retentionMs: number;
  sweepMs: number;
  workers: number;
}

function parse(argv: string[]): RetentionBenchConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    transport: { type: 'string', default: 'nats' },
    store: { type: 'string', default: 'redis' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    'retention-ms': { type: 'string' },
    'sweep-ms': { type: 'string' },
    workers: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const { transport, store } = busAndStore(values);
  const count = (flag: keyof typeof values, fallback: number): number => {
    const raw = values[flag];
    return typeof raw === 'string' ? wholeNumber(`--${flag}`, raw) : fallback;
  };
  return {
    transport,
    store,
    rate: count('rate', 700),
    seconds: count('seconds', 30),
    retentionMs: count('retention-ms', 5_000),
    sweepMs: count('sweep-ms', 1_000),
    workers: count('workers', 2),
  };
}

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
  let completed = 0;
  let deleted = 0;
  const workers = Array.from(
    { length: config.workers },
    () =>
      new Worker({
        transport,
        store,
        workflows: [chain10],
        concurrency: 1000,
        retentionMs: config.retentionMs,
        retentionSweepMs: config.sweepMs,
        onEvent: (event) => {
          if (event.type === 'run-completed') completed += 1;
          else if (event.type === 'runs-expired') deleted += event.runIds.length;
        },
      }),
  );
  try {
    await client.connect();
    for (const worker of workers) await worker.start();
    console.log(
      `retention on ${config.transport}+${config.store}: chain10 started at ${config.rate} runs/s for ` +
        `${config.seconds} s, ${config.workers} workers, retention ${config.retentionMs} ms, sweep every ${config.sweepMs} ms`,
    );
    console.log('    s  started  completed/s  deleted/s  finished runs kept');
    const started = performance.now();
    const startUntil = started + config.seconds * 1000;
    // After the last start: until every run completed and then retention and two sweeps passed
    // (at most two minutes more), so the table ends with what the sweep leaves behind.
    const hardEnd = startUntil + 120_000;
    let lastCompletionAt = started;
    const running = (): boolean => {
      const now = performance.now();
      if (now < startUntil || now >= hardEnd) return now < startUntil;
      if (completed < startedRuns) return true;
      return now < lastCompletionAt + config.retentionMs + 2 * config.sweepMs + 1_000;
    };
    let startedRuns = 0;
    let peakKept = 0;
    let lastCompleted = 0;
    let lastDeleted = 0;
    let completedWhileStarting = 0;
    // The starter paces itself: every 10 ms it starts what the rate owes so far.
    const starter = (async () => {
      while (performance.now() < startUntil) {
        const owed = Math.floor(((performance.now() - started) / 1000) * config.rate) - startedRuns;
        const batch = [];
        for (let i = 0; i < owed; i++) batch.push(client.start(chain10, startedRuns + i));
        startedRuns += owed;
        await Promise.all(batch);
        await sleep(10);
      }
    })();
    let lastAt = started;
    for (let second = 1; running(); second++) {
      await sleep(Math.max(0, started + second * 1000 - performance.now()));
      // Every finished run the store still keeps, whatever its age.
      const kept = (await store.retention.expired(0, 10_000_000)).length;
      const now = performance.now();
      peakKept = Math.max(peakKept, kept);
      if (now <= startUntil) completedWhileStarting = completed;
      // Rates over the time that really passed: a loaded machine stretches the rows.
      const dt = (now - lastAt) / 1000;
      console.log(
        `${((now - started) / 1000).toFixed(1).padStart(5)}  ${String(startedRuns).padStart(7)}  ` +
          `${String(Math.round((completed - lastCompleted) / dt)).padStart(11)}  ` +
          `${String(Math.round((deleted - lastDeleted) / dt)).padStart(9)}  ${String(kept).padStart(18)}`,
      );
      lastAt = now;
      if (completed > lastCompleted) lastCompletionAt = now;
      lastCompleted = completed;
      lastDeleted = deleted;
    }
    await starter;
    const elapsed = (performance.now() - started) / 1000;
    const kept = (await store.retention.expired(0, 10_000_000)).length;
    console.log(
      `\ncompleted ${completed} runs (${Math.round(completedWhileStarting / config.seconds)} runs/s while starting), ` +
        `deleted ${deleted} (${Math.round(deleted / elapsed)} runs/s over ${elapsed.toFixed(0)} s); ` +
        `the store held at most ${peakKept} finished runs ` +
        `(${Math.round((config.rate * (config.retentionMs + config.sweepMs)) / 1000)} = rate × (retention + sweep) is the bound to expect) ` +
        `and keeps ${kept} at the end`,
    );
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    await Promise.allSettled([transport.close(), store.close()]);
    await env.dispose().catch((err: unknown) => console.error(`cleanup of ${env.ns} failed: ${String(err)}`));
  }
});
