/**
 * Raw floors: what each service does for one client with no Baton (or BullMQ) logic around it.
 * Each floor measures two things on a scratch object of its own (stream, keys, schema, topic),
 * then removes it:
 *
 * - latency: one operation at a time, each awaited before the next (percentiles);
 * - throughput: many operations outstanding from one client (ops per second of wall time).
 *
 * A Baton step costs at least one durable write, so these bound from below what a step can cost.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { jetstreamManager, jetstream, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';
import { measureKafkaProduceFloor } from '@baton/transport-kafka';
import { Redis } from 'ioredis';
import pg from 'pg';
import { percentiles, type BaselineResult, type Progress } from '../types.js';

/** Bytes of each message, value or row the floors write. */
const PAYLOAD_BYTES = 100;
/** Sequential operations measured for latency unless told otherwise. */
const DEFAULT_SEQUENTIAL = 2_000;
/** Unmeasured operations first: connections, prepared statements, JIT. */
const WARM_UP = 50;

export interface JetStreamFloorOptions {
  natsUrl: string;
  /** Publishes of the throughput phase. @defaultValue 20000 */
  count?: number;
  /** Publishes awaiting their ack at once. @defaultValue 256 */
  inFlight?: number;
  /** Publishes of the latency phase. @defaultValue 2000 */
  sequential?: number;
  progress?: Progress;
}

export interface RedisFloorOptions {
  redisUrl: string;
  /** SETs of the throughput phase. @defaultValue 100000 */
  count?: number;
  /** SETs per pipeline. @defaultValue 1000 */
  pipeline?: number;
  /** SETs of the latency phase. @defaultValue 2000 */
  sequential?: number;
  progress?: Progress;
}

export interface PostgresFloorOptions {
  postgresUrl: string;
  /** INSERTs of the throughput phase. @defaultValue 10000 */
  count?: number;
  /** Connections inserting at once. @defaultValue 8 */
  connections?: number;
  /** INSERTs of the latency phase. @defaultValue 2000 */
  sequential?: number;
  progress?: Progress;
}

export interface KafkaFloorOptions {
  kafkaUrl: string;
  /** Records of the throughput phase. @defaultValue 20000 */
  count?: number;
  /** Records awaiting their ack at once. @defaultValue 256 */
  inFlight?: number;
  /** Records of the latency phase. @defaultValue 2000 */
  sequential?: number;
  progress?: Progress;
}

/** Publish with ack to a file-storage stream, as Baton's journal append does. */
export async function jetstreamPublishFloor(opts: JetStreamFloorOptions): Promise<BaselineResult> {
  const count = positive('count', opts.count ?? 20_000);
  const inFlight = positive('inFlight', opts.inFlight ?? 256);
  const sequential = positive('sequential', opts.sequential ?? DEFAULT_SEQUENTIAL);
  const id = uniqueId();
  const stream = `BATON_BENCH_FLOOR_${id}`;
  const subject = `baton.bench.floor.${id}`;
  const nc = await connectNats({ servers: opts.natsUrl, name: 'baton-bench-floor', timeout: 5_000 }).catch(
    (err: unknown) => {
      throw new Error(`jetstream floor: cannot reach NATS at ${opts.natsUrl}: ${describe(err)}`, {
        cause: err,
      });
    },
  );
  let created = false;
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.add({
      name: stream,
      subjects: [subject],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      num_replicas: 1,
    });
    created = true;
    const js = jetstream(nc);
    const payload = randomBytes(PAYLOAD_BYTES);
    const publish = async (): Promise<void> => {
      await js.publish(subject, payload);
    };
    const measured = await measure('jetstream publish floor', publish, { sequential, count, inFlight }, opts);
    return {
      name: 'jetstream publish (file storage)',
      ...measured.result,
      detail:
        `${PAYLOAD_BYTES}-byte messages to a file-storage stream, publish awaiting its ack: ` +
        `latency over ${sequential} sequential publishes; throughput over ${count} publishes with ` +
        `${inFlight} in flight from one connection`,
    };
  } finally {
    if (created) await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close().catch(() => undefined);
  }
}

/** SET of a small value: one at a time, then in pipelines. */
export async function redisSetFloor(opts: RedisFloorOptions): Promise<BaselineResult> {
  const count = positive('count', opts.count ?? 100_000);
  const pipeline = positive('pipeline', opts.pipeline ?? 1_000);
  const sequential = positive('sequential', opts.sequential ?? DEFAULT_SEQUENTIAL);
  const prefix = `baton-bench-floor:${uniqueId()}:`;
  // The floor writes over a small set of keys, so cleaning up is one DEL of known names.
  const keySpace = 1_000;
  const keyOf = (i: number): string => `${prefix}${i % keySpace}`;
  const redis = new Redis(opts.redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect().catch((err: unknown) => {
      throw new Error(`redis floor: cannot reach Redis at ${opts.redisUrl}: ${describe(err)}`, {
        cause: err,
      });
    });
    const value = randomBytes(PAYLOAD_BYTES).toString('hex').slice(0, PAYLOAD_BYTES);
    let i = 0;
    const batches = Math.ceil(count / pipeline);
    const measured = await measure(
      'redis set floor',
      async () => {
        await redis.set(keyOf(i++), value);
      },
      { sequential, count: batches, inFlight: 1, opsPerCall: pipeline },
      opts,
      async () => {
        const batch = redis.pipeline();
        for (let k = 0; k < pipeline; k++) batch.set(keyOf(i++), value);
        const replies = (await batch.exec()) ?? [];
        const failed = replies.find(([err]) => err !== null);
        if (failed) throw failed[0];
      },
    );
    // The throughput phase ran whole pipelines: count what was really sent.
    const sent = batches * pipeline;
    return {
      name: 'redis SET',
      opsPerSecond: sent / (measured.wallMs / 1_000),
      latency: measured.result.latency,
      detail:
        `SET of ${PAYLOAD_BYTES}-byte values: latency over ${sequential} sequential SETs; throughput ` +
        `over ${sent} SETs in pipelines of ${pipeline}, one pipeline at a time`,
    };
  } finally {
    if (redis.status === 'ready') {
      const keys = Array.from({ length: keySpace }, (_, k) => `${prefix}${k}`);
      await redis.del(...keys).catch(() => undefined);
    }
    redis.disconnect();
  }
}

/** Single-row INSERT in autocommit (one commit, one WAL flush each). */
export async function postgresInsertFloor(opts: PostgresFloorOptions): Promise<BaselineResult> {
  const count = positive('count', opts.count ?? 10_000);
  const connections = positive('connections', opts.connections ?? 8);
  const sequential = positive('sequential', opts.sequential ?? DEFAULT_SEQUENTIAL);
  const schema = `baton_bench_floor_${uniqueId()}`;
  const pool = new pg.Pool({
    connectionString: opts.postgresUrl,
    max: connections,
    connectionTimeoutMillis: 5_000,
    application_name: 'baton-bench-floor',
  });
  pool.on('error', () => undefined);
  let created = false;
  try {
    await pool.query(`create schema ${schema}`).catch((err: unknown) => {
      throw new Error(`postgres floor: cannot use Postgres at ${opts.postgresUrl}: ${describe(err)}`, {
        cause: err,
      });
    });
    created = true;
    await pool.query(`create table ${schema}.floor (id bigint primary key, body text not null)`);
    const body = randomBytes(PAYLOAD_BYTES).toString('hex').slice(0, PAYLOAD_BYTES);
    let nextId = 0;
    // A named statement is parsed once per connection, as a store's hot queries are.
    const insert = {
      name: `${schema}_insert`,
      text: `insert into ${schema}.floor (id, body) values ($1, $2)`,
    };
    // Sequential queries through the pool reuse one idle connection; the throughput phase uses all.
    const measured = await measure(
      'postgres insert floor',
      async () => {
        await pool.query({ ...insert, values: [nextId++, body] });
      },
      { sequential, count, inFlight: connections },
      opts,
    );
    return {
      name: 'postgres INSERT (autocommit)',
      ...measured.result,
      detail:
        `single-row INSERT of a ${PAYLOAD_BYTES}-byte text row, each its own transaction: latency over ` +
        `${sequential} sequential INSERTs on one connection; throughput over ${count} INSERTs from ` +
        `${connections} connections at once`,
    };
  } finally {
    if (created) await pool.query(`drop schema ${schema} cascade`).catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
}

/** Produce with acks=all through the Kafka transport's idempotent producer. */
export async function kafkaProduceFloor(opts: KafkaFloorOptions): Promise<BaselineResult> {
  const count = positive('count', opts.count ?? 20_000);
  const inFlight = positive('inFlight', opts.inFlight ?? 256);
  const sequential = positive('sequential', opts.sequential ?? DEFAULT_SEQUENTIAL);
  const label = 'kafka produce floor';
  let started = false;
  const floor = await measureKafkaProduceFloor({
    brokers: opts.kafkaUrl,
    count,
    inFlight,
    sequential,
    messageBytes: PAYLOAD_BYTES,
    onProgress: (done, total) => {
      if (!started) {
        started = true;
        opts.progress?.start(label, total);
      }
      opts.progress?.tick(done);
    },
  }).catch((err: unknown) => {
    throw new Error(`kafka floor: Kafka at ${opts.kafkaUrl} failed: ${describe(err)}`, { cause: err });
  });
  const opsPerSecond = floor.count / (floor.wallMs / 1_000);
  const latency = percentiles(floor.sequentialMs);
  if (!started) opts.progress?.start(label, floor.count + floor.sequentialMs.length);
  opts.progress?.done(summary(latency.p50, opsPerSecond));
  return {
    name: 'kafka produce (idempotent, acks=all)',
    opsPerSecond,
    latency,
    detail:
      `${floor.messageBytes}-byte records to a 1-partition topic through the transport's idempotent ` +
      `producer, acks=all: latency over ${floor.sequentialMs.length} sequential sends; throughput over ` +
      `${floor.count} sends with ${floor.inFlight} outstanding (kafkajs keeps one produce request in ` +
      `flight per broker, so outstanding records go out together in the next request)`,
  };
}

interface Measured {
  result: Pick<BaselineResult, 'opsPerSecond' | 'latency'>;
  /** Wall time of the throughput phase, milliseconds. */
  wallMs: number;
}

/**
 * Runs `op` unmeasured a few times, then `sequential` times one by one (latency), then `count`
 * times with `inFlight` outstanding (throughput). `bulk`, when given, is what the throughput phase
 * runs instead of `op` (each call counting as one).
 */
async function measure(
  label: string,
  op: () => Promise<void>,
  shape: { sequential: number; count: number; inFlight: number; opsPerCall?: number },
  opts: { progress?: Progress },
  bulk: () => Promise<void> = op,
): Promise<Measured> {
  const progress = opts.progress;
  const total = shape.sequential + shape.count;
  let done = 0;
  const every = Math.max(1, Math.floor(total / 100));
  const tick = (): void => {
    done++;
    if (done % every === 0) progress?.tick(done);
  };
  progress?.start(label, total);
  for (let i = 0; i < WARM_UP; i++) await op();
  // Also open whatever the throughput phase will use (pool connections, pipelines) before timing.
  if (shape.count > 0) {
    await Promise.all(Array.from({ length: Math.min(shape.inFlight, shape.count) }, () => bulk()));
  }

  const samples: number[] = [];
  for (let i = 0; i < shape.sequential; i++) {
    const started = performance.now();
    await op();
    samples.push(performance.now() - started);
    tick();
  }

  let issued = 0;
  const lane = async (): Promise<void> => {
    while (issued < shape.count) {
      issued++;
      await bulk();
      tick();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(shape.inFlight, shape.count) }, lane));
  const wallMs = performance.now() - started;

  const latency = samples.length > 0 ? percentiles(samples) : null;
  // A bulk call (a pipeline) may carry several operations.
  const opsPerSecond = shape.count > 0 ? (shape.count * (shape.opsPerCall ?? 1)) / (wallMs / 1_000) : 0;
  progress?.done(summary(latency?.p50 ?? NaN, opsPerSecond));
  return { result: { opsPerSecond, latency }, wallMs };
}

function summary(p50: number, opsPerSecond: number): string {
  const parts: string[] = [];
  if (Number.isFinite(p50)) parts.push(`p50 ${p50.toFixed(3)} ms`);
  if (opsPerSecond > 0) parts.push(`${Math.round(opsPerSecond).toLocaleString('en-US')}/s`);
  return parts.join(', ');
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return value;
}

function uniqueId(): string {
  return `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
