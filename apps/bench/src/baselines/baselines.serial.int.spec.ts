/**
 * Smoke test of the BullMQ baseline and the raw floors against the shared services: tiny counts,
 * sane numbers, nothing left behind. No timing thresholds: the machine is shared.
 */
import {
  kafkaTestUrl,
  natsTestUrl,
  postgresTestUrl,
  redisTestUrl,
  startPrivateRedis,
} from '@baton/testing/servers';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { redisServerProbe } from '../server-probes.js';
import type { BaselineResult, Progress } from '../types.js';
import { CHAIN_STEPS, runBullmqChain10, runBullmqSingle } from './bullmq.js';
import { jetstreamPublishFloor, kafkaProduceFloor, postgresInsertFloor, redisSetFloor } from './floors.js';

function expectSane(result: BaselineResult): void {
  expect(result.opsPerSecond).toBeGreaterThan(0);
  expect(Number.isFinite(result.opsPerSecond)).toBe(true);
  expect(result.latency).not.toBeNull();
  expect(result.latency!.count).toBeGreaterThan(0);
  expect(result.latency!.p50).toBeGreaterThan(0);
  expect(Number.isFinite(result.latency!.p50)).toBe(true);
  expect(result.latency!.max).toBeGreaterThanOrEqual(result.latency!.p50);
  expect(result.detail.length).toBeGreaterThan(0);
}

/** A Progress that records what it was told. */
function recordingProgress(): Progress & { labels: string[]; ticks: number; dones: number } {
  const seen = { labels: [] as string[], ticks: 0, dones: 0 };
  return Object.assign(seen, {
    start: (label: string) => void seen.labels.push(label),
    tick: () => void seen.ticks++,
    done: () => void seen.dones++,
    log: () => undefined,
  });
}

async function benchKeys(): Promise<string[]> {
  const redis = new Redis(redisTestUrl());
  try {
    return [...(await redis.keys('baton-bench-bull-*')), ...(await redis.keys('baton-bench-floor:*'))];
  } finally {
    redis.disconnect();
  }
}

async function benchSchemas(): Promise<string[]> {
  const client = new pg.Client({ connectionString: postgresTestUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where nspname like 'baton_bench_floor_%' order by 1",
    );
    return rows.map((r) => r.nspname);
  } finally {
    await client.end();
  }
}

describe('bullmq baseline', () => {
  it('runs chain10 as step jobs in a worker process: every job does its ten steps', async () => {
    const keysBefore = await benchKeys();
    const progress = recordingProgress();
    // Enough steps for the worker process's CPU to span many of /proc's 10 ms ticks.
    const runs = 300;
    const result = await runBullmqChain10({
      redisUrl: redisTestUrl(),
      runs,
      concurrency: 4,
      singleRuns: 5,
      progress,
    });
    expectSane(result);
    expect(result.name).toBe('bullmq chain10 c=4');
    expect(result.runsCompleted).toBe(runs);
    // Counted by the worker process itself, over the measured phase only (not its warm-up).
    expect(result.stepsExecuted).toBe(runs * CHAIN_STEPS);
    expect(result.latency!.count).toBe(runs);
    // The worker process's CPU over that phase, read from /proc.
    expect(result.workerCpuSeconds).toBeGreaterThan(0);
    expect(Number.isFinite(result.workerCpuSeconds)).toBe(true);
    expect(result.workerCpuMicrosPerStep).toBeCloseTo((result.workerCpuSeconds * 1e6) / (runs * CHAIN_STEPS));
    expect(result.workerCpuMicrosPerStep).toBeGreaterThan(0);
    expect(result.singleRun.count).toBe(5);
    expect(result.singleRun.p50).toBeGreaterThan(0);
    expect(result.detail).toMatch(/single run p50 \d+\.\d+ ms/);
    expect(progress.labels).toEqual(['bullmq chain10 c=4']);
    expect(progress.ticks).toBeGreaterThan(0);
    expect(progress.dones).toBe(1);
    // The queue was obliterated: nothing of this run is left in Redis.
    expect(await benchKeys()).toEqual(keysBefore);
  }, 60_000);

  it("reads its Redis's CPU and commands over the same phase as the worker's, on a private Redis", async () => {
    const server = await startPrivateRedis(['--appendonly', 'no']);
    const redis = redisServerProbe({ url: server.url, private: true, pid: server.pid() });
    try {
      const runs = 100;
      const result = await runBullmqChain10({
        redisUrl: server.url,
        runs,
        concurrency: 10,
        singleRuns: 1,
        redis,
      });
      const cpu = result.cpu!;
      expect(cpu.steps).toBe(runs * CHAIN_STEPS);
      // Redis is BullMQ's queue and its store at once: one server, counted once.
      expect(cpu.busIsStore).toBe(true);
      expect(cpu.busMicrosPerStep).toBeNull();
      expect(cpu.servers).toHaveLength(1);
      const [window] = cpu.servers;
      expect(window).toMatchObject({ role: 'bus+store', server: 'redis', private: true, unreadable: null });
      // Every step saves its data with a command of its own, besides each job's fetch and finish.
      expect(window!.counters.commands).toBeGreaterThan(runs * CHAIN_STEPS);
      expect(Number.isFinite(cpu.storeMicrosPerStep)).toBe(true);
      expect(cpu.totalMicrosPerStep).toBeCloseTo(cpu.workerMicrosPerStep + cpu.storeMicrosPerStep!);
      expect(cpu.workerMicrosPerStep).toBeCloseTo(result.workerCpuMicrosPerStep);
    } finally {
      await redis.close();
      await server.dispose();
    }
  }, 60_000);

  it('measures one run alone', async () => {
    const result = await runBullmqSingle({ redisUrl: redisTestUrl(), runs: 10 });
    expectSane(result);
    expect(result.latency!.count).toBe(10);
  });
});

describe('floors', () => {
  it('jetstream publish', async () => {
    const progress = recordingProgress();
    const result = await jetstreamPublishFloor({
      natsUrl: natsTestUrl(),
      count: 500,
      inFlight: 32,
      sequential: 100,
      progress,
    });
    expectSane(result);
    expect(result.latency!.count).toBe(100);
    expect(progress.dones).toBe(1);
  });

  it('redis SET', async () => {
    const keysBefore = await benchKeys();
    const result = await redisSetFloor({
      redisUrl: redisTestUrl(),
      count: 500,
      pipeline: 100,
      sequential: 100,
    });
    expectSane(result);
    expect(await benchKeys()).toEqual(keysBefore);
  });

  it('postgres INSERT', async () => {
    const schemasBefore = await benchSchemas();
    const result = await postgresInsertFloor({ postgresUrl: postgresTestUrl(), count: 500, sequential: 100 });
    expectSane(result);
    expect(await benchSchemas()).toEqual(schemasBefore);
  });

  it('kafka produce', async () => {
    const progress = recordingProgress();
    const result = await kafkaProduceFloor({
      kafkaUrl: kafkaTestUrl(),
      count: 500,
      inFlight: 32,
      sequential: 100,
      progress,
    });
    expectSane(result);
    expect(result.latency!.count).toBe(100);
    expect(progress.dones).toBe(1);
  });

  it('names the URL when Kafka is unreachable', async () => {
    await expect(
      kafkaProduceFloor({ kafkaUrl: 'kafka://127.0.0.1:1', count: 1, sequential: 1 }),
    ).rejects.toThrow(/127\.0\.0\.1:1/);
  });
});
