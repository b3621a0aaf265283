/**
 * The group-commit probe: measures, on the real NATS and Redis, what journaling several runs'
 * entries in one message would buy and cost, before anyone builds it into the worker
 * (docs/performance.md, "Group commit across runs"). It models only the journal path of `runs`
 * concurrent runs doing `steps` sequential durable steps each, with no executor around it:
 *
 * - `per-step` (what Baton does): each step publishes one record to its run's own subject with
 *   the expected last subject sequence (the fence) and waits for the ack, through the transport's
 *   own pipelined publisher;
 * - `group`: each step hands its entry to one committer per process, which publishes every entry
 *   waiting as one record on a shared subject (the first entry of a quiet moment goes at once,
 *   later ones wait for the flush in flight), then makes one epoch-checked Redis call recording,
 *   for each run in the record, "my entries up to here are in group record P" (the fence moved
 *   to the store); a step is durable when both are acknowledged.
 *
 * Then the recovery side: for a sample of runs, the time and bytes to read a run's entries back
 * (its subject; or its pointers, then every group record they name).
 *
 * It reports CPU seconds of this process (the client side of both) and of nats-server and
 * redis-server when they run on this machine. Nothing is asserted about speed.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { jetstreamManager, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { connect as connectNats, headers, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamPublisher } from '@baton/transport-nats';
import { Redis } from 'ioredis';
import { processUsage } from './process-usage.js';
import { percentiles, type Percentiles } from './types.js';

export interface GroupCommitProbeOptions {
  natsUrl: string;
  redisUrl: string;
  /** Concurrent runs. @defaultValue 1000 */
  runs?: number;
  /** Sequential steps per run. @defaultValue 10 */
  steps?: number;
  /** Bytes of each entry (a chain10 entry is ~100). @defaultValue 100 */
  entryBytes?: number;
  /** Runs whose entries are read back to measure recovery. @defaultValue 100 */
  resumeSample?: number;
  log?: (line: string) => void;
}

export interface ProbeModeResult {
  mode: 'per-step' | 'group';
  steps: number;
  wallSeconds: number;
  stepsPerSecond: number;
  /** Step latency (append to durable), ms. */
  stepLatency: Percentiles;
  /** Records published, and Redis calls made (group mode). */
  publishes: number;
  storeCalls: number;
  /** Entries per published record. */
  entriesPerRecord: number;
  cpuSeconds: { client: number; natsServer: number; redisServer: number };
  /** Client CPU per step, µs. */
  clientCpuPerStepMicros: number;
  /** Reading one run's entries back: latency (ms) and bytes read from the bus. */
  resume: { latency: Percentiles; bytesPerRun: Percentiles };
}

export interface GroupCommitProbeResult {
  runs: number;
  stepsPerRun: number;
  entryBytes: number;
  modes: ProbeModeResult[];
}

const encoder = new TextEncoder();

/** Entries one group-mode Redis call may carry (keys per run: lease and pointers). */
const MAX_GROUP = 500;

const FENCE_SCRIPT = `
-- KEYS: lease1, pointers1, lease2, pointers2, ...; ARGV: record position, epoch1, epoch2, ...
local refused = 0
for i = 1, #KEYS, 2 do
  if redis.call('HGET', KEYS[i], 'epoch') == ARGV[(i + 1) / 2 + 1] then
    redis.call('RPUSH', KEYS[i + 1], ARGV[1])
  else
    refused = refused + 1
  end
end
return refused`;

/** Sums the CPU seconds of the processes named `name` (nats-server, redis-server) on this machine. */
async function serverCpu(name: string): Promise<number> {
  let total = 0;
  let found = false;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() !== name) continue;
    found = true;
    total += (await processUsage(Number(entry))).cpuSeconds;
  }
  return found ? total : NaN;
}

async function cpuNow(): Promise<{ client: number; natsServer: number; redisServer: number }> {
  const usage = process.cpuUsage();
  return {
    client: (usage.user + usage.system) / 1e6,
    natsServer: await serverCpu('nats-server'),
    redisServer: await serverCpu('redis-server'),
  };
}

interface Context {
  nc: NatsConnection;
  /** Baton's own pipelined publisher, as the transport journals with. */
  publisher: JetStreamPublisher;
  jsm: JetStreamManager;
  redis: Redis;
  stream: string;
  prefix: string;
  entry: (run: number, step: number) => string;
}

export async function groupCommitProbe(opts: GroupCommitProbeOptions): Promise<GroupCommitProbeResult> {
  const runs = opts.runs ?? 1000;
  const steps = opts.steps ?? 10;
  const entryBytes = opts.entryBytes ?? 100;
  const sample = Math.min(runs, opts.resumeSample ?? 100);
  const log = opts.log ?? (() => undefined);
  const id = randomBytes(4).toString('hex');
  const stream = `BATON_PROBE_${id}`;
  const prefix = `baton.probe.${id}`;
  const nc = await connectNats({ servers: opts.natsUrl, name: 'baton-group-commit-probe', timeout: 5_000 });
  const redis = new Redis(opts.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: stream,
    subjects: [`${prefix}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    num_replicas: 1,
    // Direct gets, as the transport's journal stream allows.
    allow_direct: true,
  });
  let ctx: Context | undefined;
  try {
    await redis.connect();
    // About `entryBytes` of JSON per entry: the fields take ~30 bytes.
    const filler = 'x'.repeat(Math.max(0, entryBytes - 30));
    ctx = {
      nc,
      publisher: new JetStreamPublisher(nc, 10_000),
      jsm,
      redis,
      stream,
      prefix,
      entry: (run, step) => JSON.stringify({ run, step, data: filler }),
    };
    const modes: ProbeModeResult[] = [];
    for (const mode of ['per-step', 'group'] as const) {
      log(`group-commit probe: ${mode}, ${runs} runs x ${steps} steps`);
      modes.push(await runMode(ctx, mode, runs, steps, sample, id));
    }
    return { runs, stepsPerRun: steps, entryBytes, modes };
  } finally {
    await jsm.streams.delete(stream).catch(() => undefined);
    if (redis.status === 'ready') {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `baton-probe:${id}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
    redis.disconnect();
    ctx?.publisher.close();
    await nc.close().catch(() => undefined);
  }
}

async function runMode(
  ctx: Context,
  mode: 'per-step' | 'group',
  runs: number,
  steps: number,
  sample: number,
  id: string,
): Promise<ProbeModeResult> {
  const tag = `${id}-${mode}`;
  const leaseKey = (run: number): string => `baton-probe:${id}:${mode}:lease:${run}`;
  const pointerKey = (run: number): string => `baton-probe:${id}:${mode}:ptr:${run}`;
  const latencies: number[] = [];
  let publishes = 0;
  let storeCalls = 0;
  let append: (run: number, step: number) => Promise<void>;

  if (mode === 'per-step') {
    const last = new Array<number>(runs).fill(0);
    append = async (run, step) => {
      // The fence of today's journal: the run's subject must still end where this writer left it.
      const fence = headers();
      fence.set('Nats-Expected-Last-Subject-Sequence', String(last[run]!));
      const ack = await ctx.publisher.publish(
        `${ctx.prefix}.run.${tag}.${run}`,
        encoder.encode(ctx.entry(run, step)),
        fence,
      );
      publishes += 1;
      last[run] = ack.seq;
    };
  } else {
    // Every run holds epoch 1, as after its claim.
    const setup = ctx.redis.pipeline();
    for (let run = 0; run < runs; run++) setup.hset(leaseKey(run), 'epoch', '1');
    await setup.exec();
    const sha = (await ctx.redis.script('LOAD', FENCE_SCRIPT)) as string;
    const committer = new Committer(async (batch) => {
      const record = `[${batch.map((w) => w.entry).join(',')}]`;
      const ack = await ctx.publisher.publish(`${ctx.prefix}.group.${tag}`, encoder.encode(record));
      publishes += 1;
      for (let i = 0; i < batch.length; i += MAX_GROUP) {
        const part = batch.slice(i, i + MAX_GROUP);
        const runsOf = [...new Set(part.map((w) => w.run))];
        const keys = runsOf.flatMap((run) => [leaseKey(run), pointerKey(run)]);
        const refused = (await ctx.redis.evalsha(
          sha,
          keys.length,
          ...keys,
          String(ack.seq),
          ...runsOf.map(() => '1'),
        )) as number;
        storeCalls += 1;
        if (refused !== 0) throw new Error(`group-commit probe: ${refused} runs refused by the fence`);
      }
    });
    append = (run, step) => committer.add(run, ctx.entry(run, step));
  }

  const before = await cpuNow();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, run) => {
      for (let step = 0; step < steps; step++) {
        const t = performance.now();
        await append(run, step);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallSeconds = (performance.now() - started) / 1000;
  const after = await cpuNow();
  const totalSteps = runs * steps;
  const client = after.client - before.client;

  // Recovery: read sampled runs' entries back, one run at a time.
  const resumeLatency: number[] = [];
  const resumeBytes: number[] = [];
  for (let run = 0; run < sample; run++) {
    const t = performance.now();
    const { bytes, entries } =
      mode === 'per-step'
        ? await readSubject(ctx, `${ctx.prefix}.run.${tag}.${run}`)
        : await readPointers(ctx, pointerKey(run), run);
    if (entries !== steps)
      throw new Error(`group-commit probe: run ${run} read ${entries} of ${steps} entries`);
    resumeLatency.push(performance.now() - t);
    resumeBytes.push(bytes);
  }
  return {
    mode,
    steps: totalSteps,
    wallSeconds,
    stepsPerSecond: totalSteps / wallSeconds,
    stepLatency: percentiles(latencies),
    publishes,
    storeCalls,
    entriesPerRecord: totalSteps / publishes,
    cpuSeconds: {
      client,
      natsServer: after.natsServer - before.natsServer,
      redisServer: after.redisServer - before.redisServer,
    },
    clientCpuPerStepMicros: (client / totalSteps) * 1e6,
    resume: { latency: percentiles(resumeLatency), bytesPerRun: percentiles(resumeBytes) },
  };
}

/** A run's own subject, read record by record (direct get, next by subject), as a resume reads a short tail. */
async function readSubject(ctx: Context, subject: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  let next = 1;
  for (;;) {
    const message = await ctx.jsm.direct.getMessage(ctx.stream, { seq: next, next_by_subj: subject });
    if (!message) return { bytes, entries };
    bytes += message.data.byteLength;
    entries += 1;
    next = message.seq + 1;
  }
}

/** A run's pointers from the store, then every group record they name, keeping the run's entries. */
async function readPointers(
  ctx: Context,
  key: string,
  run: number,
): Promise<{ bytes: number; entries: number }> {
  const positions = [...new Set(await ctx.redis.lrange(key, 0, -1))].map(Number);
  let bytes = 0;
  let entries = 0;
  for (const seq of positions) {
    const message = await ctx.jsm.direct.getMessage(ctx.stream, { seq });
    if (!message) throw new Error(`group-commit probe: group record ${seq} is gone`);
    bytes += message.data.byteLength;
    const record = JSON.parse(new TextDecoder().decode(message.data)) as Array<{ run: number }>;
    entries += record.filter((e) => e.run === run).length;
  }
  return { bytes, entries };
}

interface Waiter {
  run: number;
  entry: string;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * One per process: the first entry of a quiet moment goes out on the next turn (with whatever
 * else that turn adds); entries added while a flush is in flight wait and go out together next.
 */
class Committer {
  private waiting: Waiter[] = [];
  private flushing = false;

  constructor(private readonly flush: (batch: Waiter[]) => Promise<void>) {}

  add(run: number, entry: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ run, entry, resolve, reject });
      if (!this.flushing && this.waiting.length === 1) setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.flush(batch);
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.flushing = false;
  }
}
