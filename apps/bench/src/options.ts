/**
 * `npm run bench -- [options]`: every option, its default, and a clear error for a bad one.
 */
import { kafkaTestUrl, natsTestUrl, postgresTestUrl, redisTestUrl } from '@baton/testing/servers';
import type { BenchConfig, BusKind, StoreKind, WorkloadName } from './types.js';

export const WORKLOADS: readonly WorkloadName[] = ['chain10', 'fanout', 'payload', 'recovery'];

export const USAGE = `Usage: npm run bench -- [options]

  --transport nats|kafka        bus of the Baton workers (default nats)
  --store redis|postgres        store of the Baton workers (default redis)
  --workloads a,b,...           of ${WORKLOADS.join(', ')} (default all)
  --runs N                      runs per throughput workload (default 1000)
  --concurrency N               BATON_CONCURRENCY of each worker process (default 1000)
  --workers N                   worker processes for the throughput workloads (default 1)
  --single-runs N               runs executed one at a time for the one-run latency (default 30)
  --kills N                     SIGKILLs, and SIGTERMs, in the recovery workload (default 10)
  --runtime dist|source         worker processes on the built JavaScript, as deployed (default
                                dist; the bench runs the cached Nx build first), or on the
                                TypeScript sources through tsx
  --pipeline-steps              workers with BATON_PIPELINE_STEPS=true (opt-in pipelined steps)
  --no-baselines                skip BullMQ and the service floors
  --out FILE                    JSON report (default .tmp/bench/bench-<time>.json)
  --smoke                       tiny sizes, to prove the bench works (CI): 20 runs, 1 kill
  --help                        this text

Servers: BATON_TEST_NATS_URL, BATON_TEST_REDIS_URL, BATON_TEST_POSTGRES_URL, BATON_TEST_KAFKA_URL
(the same variables and defaults as the tests).`;

export class UsageError extends Error {}

export function parseOptions(argv: readonly string[], now = new Date()): BenchConfig | 'help' {
  const config: BenchConfig = {
    transport: 'nats',
    store: 'redis',
    runs: 1000,
    concurrency: 1000,
    workers: 1,
    workloads: [...WORKLOADS],
    kills: 10,
    singleRuns: 30,
    baselines: true,
    runtime: 'dist',
    pipelineSteps: false,
    out: `.tmp/bench/bench-${now.toISOString().replace(/[:.]/g, '-')}.json`,
    natsUrl: natsTestUrl(),
    redisUrl: redisTestUrl(),
    postgresUrl: postgresTestUrl(),
    kafkaUrl: kafkaTestUrl(),
  };
  const args = [...argv];
  const value = (flag: string): string => {
    const v = args.shift();
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value\n\n${USAGE}`);
    return v;
  };
  const count = (flag: string, min: number): number => {
    const raw = value(flag);
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min)
      throw new UsageError(`${flag} is '${raw}'; give a whole number of at least ${min}`);
    return n;
  };
  while (args.length > 0) {
    const flag = args.shift()!;
    switch (flag) {
      case '--help':
      case '-h':
        return 'help';
      case '--transport': {
        const v = value(flag);
        if (v !== 'nats' && v !== 'kafka') throw new UsageError(`--transport is '${v}'; use nats or kafka`);
        config.transport = v as BusKind;
        break;
      }
      case '--store': {
        const v = value(flag);
        if (v !== 'redis' && v !== 'postgres')
          throw new UsageError(`--store is '${v}'; use redis or postgres`);
        config.store = v as StoreKind;
        break;
      }
      case '--workloads': {
        const list = value(flag)
          .split(',')
          .map((w) => w.trim())
          .filter(Boolean);
        const unknown = list.filter((w) => !WORKLOADS.includes(w as WorkloadName));
        if (unknown.length > 0 || list.length === 0) {
          throw new UsageError(
            `--workloads has '${unknown.join(',') || '(nothing)'}'; choose from ${WORKLOADS.join(', ')}`,
          );
        }
        config.workloads = list as WorkloadName[];
        break;
      }
      case '--runs':
        config.runs = count(flag, 1);
        break;
      case '--concurrency':
        config.concurrency = count(flag, 1);
        break;
      case '--workers':
        config.workers = count(flag, 1);
        break;
      case '--single-runs':
        config.singleRuns = count(flag, 1);
        break;
      case '--kills':
        config.kills = count(flag, 1);
        break;
      case '--runtime': {
        const v = value(flag);
        if (v !== 'dist' && v !== 'source') throw new UsageError(`--runtime is '${v}'; use dist or source`);
        config.runtime = v;
        break;
      }
      case '--pipeline-steps':
        config.pipelineSteps = true;
        break;
      case '--no-baselines':
        config.baselines = false;
        break;
      case '--out':
        config.out = value(flag);
        break;
      case '--smoke':
        config.runs = 20;
        config.kills = 1;
        config.concurrency = 100;
        break;
      default:
        throw new UsageError(`unknown option '${flag}'\n\n${USAGE}`);
    }
  }
  return config;
}
