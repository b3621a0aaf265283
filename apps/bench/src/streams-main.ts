/**
 * `npm run bench:streams -- [options]`: run streams (docs/streams.md) on the real bus and store.
 * - throughput: one activity writes `--chunks` chunks, (a) each write awaited before the next (a
 *   producer that waits for durability), (b) every write issued at once and awaited together (a
 *   producer that does not wait: the writer batches what queues up during an append);
 * - end-to-end latency: an activity writes a chunk every `--interval` ms carrying its write time;
 *   a reader in this process (`client.stream`) notes when each arrives: p50, p95, p99, max.
 * Workers run in this process. A benchmark, not a test: it checks only that every chunk arrived
 * once and in order, nothing about timings.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@baton/client';
import { defineActivity, defineWorkflow } from '@baton/core';
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import { Worker } from '@baton/worker';
import { busAndStore, parseCommandArgs, runCommand, wholeNumber } from './command.js';
import { benchEnvironment } from './environment.js';
import type { BusKind, StoreKind } from './types.js';

const USAGE = `Usage: npm run bench:streams -- [options]

  --transport nats|kafka|redis   the bus (default nats)
  --store redis|postgres   the store (default redis)
  --chunks N               chunks per throughput run (default 5000)
  --latency-chunks N       chunks of the latency run (default 500)
  --interval MS            pause between two chunks of the latency run (default 5)
  --help                   this text`;

interface StreamBenchConfig {
  transport: BusKind;
  store: StoreKind;
  chunks: number;
  latencyChunks: number;
  intervalMs: number;
}

function parse(argv: string[]): StreamBenchConfig | undefined {
  const { values } = parseCommandArgs(argv, USAGE, {
    transport: { type: 'string', default: 'nats' },
    store: { type: 'string', default: 'redis' },
    chunks: { type: 'string' },
    'latency-chunks': { type: 'string' },
    interval: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return undefined;
  const { transport, store } = busAndStore(values);
  const count = (flag: 'chunks' | 'latency-chunks' | 'interval', fallback: number): number => {
    const raw = values[flag];
    return typeof raw === 'string' ? wholeNumber(`--${flag}`, raw) : fallback;
  };
  return {
    transport,
    store,
    chunks: count('chunks', 5_000),
    latencyChunks: count('latency-chunks', 500),
    intervalMs: count('interval', 5),
  };
}

type Mode = 'awaited' | 'pipelined' | 'paced';
interface StreamInput {
  mode: Mode;
  chunks: number;
  intervalMs: number;
}

/** Writes the chunks as `mode` says; resolves with the milliseconds the writes took. */
const produce = defineActivity({
  name: 'bench_stream_produce',
  run: async (input: StreamInput, io) => {
    const out = io.stream<{ i: number; at: number }>('out');
    const started = performance.now();
    if (input.mode === 'pipelined') {
      const writes: Promise<void>[] = [];
      for (let i = 0; i < input.chunks; i++) writes.push(out.write({ i, at: 0 }));
      await Promise.all(writes);
    } else {
      for (let i = 0; i < input.chunks; i++) {
        await out.write({ i, at: performance.timeOrigin + performance.now() });
        if (input.mode === 'paced') await sleep(input.intervalMs);
      }
    }
    const elapsed = performance.now() - started;
    await out.close();
    return elapsed;
  },
});

const streamer = defineWorkflow({
  name: 'bench_streamer',
  version: 1,
  run: async (ctx, input: StreamInput) => ctx.run(produce, input),
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

await runCommand(USAGE, parse, async (config) => {
  const env = await benchEnvironment({
    transport: config.transport,
    store: config.store,
    urls: {
      natsUrl: natsTestUrl(),
      kafkaUrl: kafkaTestUrl(),
      redisUrl: redisTestUrl(),
      postgresUrl: postgresTestUrl(),
    },
  });
  await Promise.all([env.transport.connect(), env.store.connect()]);
  const adapters = { transport: env.transport, store: env.store };
  const client = new Client(adapters);
  const worker = new Worker({ ...adapters, workflows: [streamer] });
  try {
    await client.connect();
    await worker.start();
    console.log(
      `$ npm run bench:streams -- --transport ${config.transport} --store ${config.store} ` +
        `--chunks ${config.chunks} --latency-chunks ${config.latencyChunks} --interval ${config.intervalMs}`,
    );
    /** Starts a run, reads its stream to the close, checks every chunk arrived once in order. */
    const measure = async (input: StreamInput): Promise<{ writeMs: number; latencies: number[] }> => {
      const handle = await client.start(streamer, input);
      const latencies: number[] = [];
      let next = 0;
      for await (const item of client.stream<{ i: number; at: number }>(handle.runId, 'out', {
        pollMs: 20,
      })) {
        if (item.kind !== 'chunk') continue;
        if (item.value.i !== next) throw new Error(`chunk ${item.value.i} arrived where ${next} was due`);
        next++;
        if (input.mode === 'paced')
          latencies.push(performance.timeOrigin + performance.now() - item.value.at);
      }
      if (next !== input.chunks) throw new Error(`${next} chunks arrived, not ${input.chunks}`);
      return { writeMs: (await handle.result({ timeoutMs: 120_000 })) as number, latencies };
    };
    // Warm-up: connections, the bus's subjects or partitions, JIT.
    await measure({ mode: 'pipelined', chunks: 200, intervalMs: 0 });
    console.log('mode        chunks   write ms   chunks/s');
    for (const mode of ['awaited', 'pipelined'] as const) {
      const { writeMs } = await measure({ mode, chunks: config.chunks, intervalMs: 0 });
      console.log(
        `${mode.padEnd(10)} ${String(config.chunks).padStart(7)} ${writeMs.toFixed(0).padStart(10)} ` +
          `${((config.chunks / writeMs) * 1000).toFixed(0).padStart(10)}`,
      );
    }
    const { latencies } = await measure({
      mode: 'paced',
      chunks: config.latencyChunks,
      intervalMs: config.intervalMs,
    });
    latencies.sort((a, b) => a - b);
    const cell = (v: number): string => v.toFixed(1).padStart(8);
    console.log(
      `end-to-end latency per chunk (write to a reader's hands), ${latencies.length} chunks, one every ${config.intervalMs} ms:`,
    );
    console.log('  p50 ms   p95 ms   p99 ms   max ms');
    console.log(
      `${cell(percentile(latencies, 50))} ${cell(percentile(latencies, 95))} ${cell(percentile(latencies, 99))} ` +
        `${cell(latencies[latencies.length - 1]!)}`,
    );
  } finally {
    await Promise.allSettled([worker.stop(), client.close()]);
    await env.dispose().catch((err: unknown) => console.error(`cleanup of ${env.ns} failed: ${String(err)}`));
  }
});
