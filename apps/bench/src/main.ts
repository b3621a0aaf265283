/**
 * `npm run bench -- [options]`: Baton's throughput, latency, failover and footprint on this
 * machine, with BullMQ's step-job pattern and the raw floors of the services measured in the same
 * run. Prints a table and writes a JSON report. A benchmark, not a test: it asserts no timings,
 * but it refuses to report figures from a run that lost or failed work.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBullmqChain10 } from './baselines/bullmq.js';
import {
  jetstreamPublishFloor,
  kafkaProduceFloor,
  postgresInsertFloor,
  redisSetFloor,
} from './baselines/floors.js';
import { BenchServers } from './bench-servers.js';
import { benchEnvironment, type BenchUrls } from './environment.js';
import { stopOnSignal } from './command.js';
import { parseOptions, USAGE, UsageError } from './options.js';
import { progressBar } from './progress.js';
import { renderReport } from './report.js';
import type { ServerKind } from './server-cost.js';
import type { BaselineResult, BenchConfig, BenchReport, Pair, Progress } from './types.js';
import { runRecovery } from './workloads/recovery.js';
import { runThroughput } from './workloads/throughput.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Versions of what was measured, from the installed packages. */
function versions(): Record<string, string> {
  const of = (pkg: string): string => {
    try {
      const json = JSON.parse(
        readFileSync(resolve(REPO_ROOT, 'node_modules', pkg, 'package.json'), 'utf8'),
      ) as {
        version: string;
      };
      return json.version;
    } catch {
      return 'not installed';
    }
  };
  const baton = JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  return {
    baton: baton.version,
    node: process.version,
    bullmq: of('bullmq'),
    '@nats-io/jetstream': of('@nats-io/jetstream'),
    kafkajs: of('kafkajs'),
    ioredis: of('ioredis'),
    pg: of('pg'),
  };
}

async function throughputPart(
  config: BenchConfig,
  pair: Pair,
  servers: BenchServers,
  progress: Progress,
  report: BenchReport,
): Promise<void> {
  for (const workload of config.workloads) {
    if (workload === 'recovery') continue;
    const env = await benchEnvironment({ ...pair, urls: servers.urls });
    try {
      await env.transport.connect();
      await env.store.connect();
      report.throughput.push(
        await runThroughput({
          workload,
          ...pair,
          env,
          runs: config.runs,
          concurrency: config.concurrency,
          workers: config.workers,
          singleRuns: config.singleRuns,
          servers: servers.measured(pair.transport, pair.store),
          progress,
        }),
      );
    } finally {
      await Promise.allSettled([env.transport.close(), env.store.close()]);
      await env
        .dispose()
        .catch((err: unknown) => progress.log(`cleanup of ${env.ns} failed: ${String(err)}`));
    }
  }
}

async function baselinePart(
  config: BenchConfig,
  servers: BenchServers,
  progress: Progress,
  report: BenchReport,
): Promise<void> {
  const urls: BenchUrls = servers.urls;
  const redis = servers.probe('redis');
  for (const concurrency of [1, 100]) {
    report.baselines.push(
      await runBullmqChain10({
        redisUrl: urls.redisUrl,
        runs: config.runs,
        concurrency,
        progress,
        ...(redis !== undefined && { redis }),
      }),
    );
  }
  const small = config.runs < 1000;
  const floors: Array<[string, () => Promise<BaselineResult>]> = [
    [
      'JetStream',
      () =>
        jetstreamPublishFloor({
          natsUrl: urls.natsUrl,
          count: small ? 2_000 : 20_000,
          inFlight: 256,
          progress,
        }),
    ],
    ['Redis', () => redisSetFloor({ redisUrl: urls.redisUrl, count: small ? 5_000 : 100_000, progress })],
    [
      'Postgres',
      () => postgresInsertFloor({ postgresUrl: urls.postgresUrl, count: small ? 1_000 : 10_000, progress }),
    ],
    [
      'Kafka',
      () =>
        kafkaProduceFloor({
          kafkaUrl: urls.kafkaUrl,
          count: small ? 2_000 : 20_000,
          inFlight: 256,
          progress,
        }),
    ],
  ];
  for (const [name, measure] of floors) {
    try {
      report.floors.push(await measure());
    } catch (err) {
      // Kafka is optional unless it is the bus under test.
      if (name === 'Kafka' && !config.pairs.some((p) => p.transport === 'kafka')) {
        progress.log(`Kafka floor skipped: ${(err as Error).message}`);
        continue;
      }
      throw err;
    }
  }
}

/** The worker processes run the built JavaScript: build it (Nx caches an unchanged tree). */
function buildWorkers(progress: Progress): void {
  progress.log('building the worker (npx nx run-many -t build; cached when nothing changed)');
  const started = Date.now();
  const result = spawnSync('npx', ['nx', 'run-many', '-t', 'build', '--outputStyle=static'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(
      `the build failed (exit ${result.status ?? result.signal}); fix it or run with --runtime source:\n` +
        `${result.stdout}${result.stderr}`,
    );
  }
  progress.log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function main(argv: string[]): Promise<number> {
  let config: BenchConfig | 'help';
  try {
    config = parseOptions(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (config === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const progress = progressBar();
  // Every worker process the bench starts (throughput and recovery) runs this way.
  process.env.BATON_WORKER_RUNTIME = config.runtime;
  // Worker processes inherit the bench's environment, and with it this setting.
  if (config.pipelineSteps) process.env.BATON_PIPELINE_STEPS = 'true';
  // A key of this run's own; the throughput client reads it from here too.
  if (config.encrypt) process.env.BATON_ENCRYPTION_KEYS = `bench:${randomBytes(32).toString('base64')}`;
  if (config.runtime === 'dist') buildWorkers(progress);
  const servers = await BenchServers.start({
    mode: config.servers,
    kinds: serverKinds(config),
    shared: config,
    log: (line) => progress.log(line),
  });
  // Ctrl-C or a kill: the private servers are stopped and their directories removed (a private
  // PostgreSQL outlives the bench otherwise); at exit, whatever is left of them gets SIGKILL.
  stopOnSignal("the bench's private servers", () => servers.stop());
  process.on('exit', () => servers.killNow());
  try {
    return await measure(config, servers, progress);
  } finally {
    await servers.stop();
  }
}

/** The servers a run needs: its bus and store, and with the baselines every floor's. */
function serverKinds(config: BenchConfig): ServerKind[] {
  const kinds: ServerKind[] = config.pairs.flatMap((p) => [p.transport, p.store]);
  if (config.baselines) kinds.push('redis', 'nats', 'postgres', 'kafka');
  return kinds;
}

async function measure(config: BenchConfig, servers: BenchServers, progress: Progress): Promise<number> {
  for (const server of servers.info) {
    progress.log(
      `${server.kind}: ${server.private ? 'private' : 'shared'} ${server.url}` +
        `${server.pid === null ? '' : ` (pid ${server.pid})`}; ${server.note}`,
    );
  }
  const cpuList = cpus();
  const report: BenchReport = {
    startedAt: new Date().toISOString(),
    config,
    versions: versions(),
    machine: {
      cpus: cpuList.length,
      cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    servers: servers.info,
    throughput: [],
    recovery: [],
    baselines: [],
    floors: [],
  };

  for (const pair of config.pairs) {
    if (config.pairs.length > 1) progress.log(`== ${pair.transport}+${pair.store}`);
    await throughputPart(config, pair, servers, progress, report);
    if (config.workloads.includes('recovery')) {
      report.recovery.push(
        await runRecovery({
          ...pair,
          kills: config.kills,
          replacementDelayMs: config.replacementDelayMs,
          urls: servers.urls,
          progress,
        }),
      );
    }
  }
  if (config.baselines) await baselinePart(config, servers, progress, report);

  const out = resolve(REPO_ROOT, config.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${renderReport(report)}\n\nJSON report: ${out}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`\nbench failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
