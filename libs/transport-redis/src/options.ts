/**
 * Options of {@link redisTransport}, resolved once into a complete
 * {@link ResolvedRedisTransportOptions}, so a typo fails when the transport is created, never on
 * the first failover.
 */
import { type ConfigError } from '@baton/core';
import { maskUrlSecret, invalidOption, type ConfigErrorFields } from '@baton/core/adapter';
import { isSentinelUrl, parseSentinelUrl, type SentinelTarget } from '@baton/redis-kit';

/** The server used when none is given: a Redis on this machine. */
export const DEFAULT_REDIS_TRANSPORT_URL = 'redis://127.0.0.1:6379';
/**
 * The prefix of every key the transport writes when none is given. Not `baton`: the Redis store's
 * default key prefix is `baton:`, and `baton-bus:` keys can never start with it, so both may
 * keep their defaults on one server (docs/redis-only.md).
 */
export const DEFAULT_REDIS_TRANSPORT_PREFIX = 'baton-bus';
/** What a prefix may be: also what keeps it safe inside a SCAN MATCH pattern (no `*?[]\`). */
export const REDIS_TRANSPORT_PREFIX = /^[A-Za-z0-9_-]{1,64}$/;

/** Options of {@link redisTransport}. */
export interface RedisTransportOptions {
  /**
   * `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS; or
   * `redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>]` (or
   * `rediss+sentinel://`) to find the primary through Redis Sentinel and follow it across a
   * failover. The user and password are the data nodes'. A password never appears in messages.
   * @defaultValue 'redis://127.0.0.1:6379'
   */
  url?: string;
  /**
   * Password of the sentinels themselves, for a `redis+sentinel://` URL.
   * @defaultValue none
   */
  sentinelPassword?: string;
  /**
   * The first segment of every key: the BullMQ queue `<prefix>:runs:*`, the journals
   * `<prefix>:journal:<runId>`, the group logs `<prefix>:group:<log>`, the dead letters
   * `<prefix>:dlq`. Letters, digits, `-` and `_`. Transports with different prefixes share nothing.
   * @defaultValue 'baton-bus'
   */
  prefix?: string;
  /**
   * How long a fetched run message may stay unacked before it is delivered again: the BullMQ lock
   * duration of the job. Longer than a worker needs to take a run's lease.
   * @defaultValue 30000
   */
  ackWaitMs?: number;
  /**
   * How often a waiting fetch asks the queue for a job while it is empty. Each waiting fetch costs
   * one script call per period.
   * @defaultValue 50
   */
  pollMs?: number;
  /**
   * Keeps the run queue's priority lanes, the BullMQ queues `runs-high` and `runs-low` beside
   * `runs` (docs/priorities.md), and fetches from them by the claim cycle. Off, the run queue is the
   * `runs` queue alone and a start at `high` or `low` is refused with a ConfigError. Opt-in like
   * on NATS and Kafka: an idle worker then waits on three queues. Turn it on for the workers, then
   * the producers.
   * @defaultValue false
   */
  priorityLanes?: boolean;
  /**
   * How long an enqueue's `msgId` suppresses a second enqueue with the same id (the BullMQ
   * de-duplication key's time to live).
   * @defaultValue 120000
   */
  duplicateWindowMs?: number;
  /**
   * Replicas that must confirm each journal append, group record and dead letter (`WAIT`) before
   * it counts, so that a failover to a replica never loses a step a worker went on from
   * (replication.ts). 0 turns the guard off: for a single server, or a failover you accept may
   * repeat the steps journaled since a run's last store write. Set it to the number of replicas.
   * @defaultValue 1 with a `redis+sentinel://` URL, else 0
   */
  waitReplicas?: number;
  /**
   * How long such a write waits for its replicas before it fails (retryable).
   * @defaultValue 1000
   */
  waitTimeoutMs?: number;
  /**
   * How long connect() may take to reach the server before it fails naming it.
   * @defaultValue 5000
   */
  connectTimeoutMs?: number;
  /**
   * How long one operation (enqueue, ack, nak, journal append or read, dead-letter call) may wait
   * for the server before it fails as unavailable (retryable).
   * @defaultValue 5000
   */
  requestTimeoutMs?: number;
}

/** Where the transport connects: one server, or the primary Sentinel names. */
export type RedisServer = {
  db: number;
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
} & (
  | { kind: 'direct'; host: string; port: number }
  | { kind: 'sentinel'; target: SentinelTarget; sentinelPassword: string | undefined }
);

/** {@link RedisTransportOptions} with every default applied and every value checked. */
export interface ResolvedRedisTransportOptions {
  url: string;
  /** The URL with its password masked: what messages show. */
  displayUrl: string;
  server: RedisServer;
  prefix: string;
  ackWaitMs: number;
  pollMs: number;
  priorityLanes: boolean;
  duplicateWindowMs: number;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  waitReplicas: number;
  waitTimeoutMs: number;
  /** How often BullMQ's stalled-job check runs: half the ack wait (see run-queue.ts). */
  stalledIntervalMs: number;
}

const OWNER = 'redisTransport';

/** The ConfigError for one option: `redisTransport: <message>`, with the option's fields. */
function refuse(
  fields: Omit<ConfigErrorFields, 'component'> & { option: string; value: string; expected: string },
  message: string,
): ConfigError {
  return invalidOption({ component: OWNER, ...fields }, message);
}

/** Applies defaults and checks every option; throws ConfigError naming the option and the fix. */
export function resolveRedisTransportOptions(
  options: RedisTransportOptions = {},
): ResolvedRedisTransportOptions {
  const url = (options.url ?? DEFAULT_REDIS_TRANSPORT_URL).trim();
  const displayUrl = maskUrlSecret(url);
  const server = serverOf(url, displayUrl, options.sentinelPassword);
  const prefix = options.prefix ?? DEFAULT_REDIS_TRANSPORT_PREFIX;
  if (!REDIS_TRANSPORT_PREFIX.test(prefix)) {
    const expected =
      "use 1 to 64 letters, digits, '-' or '_' (it starts every key, and ':' separates the segments after it)";
    throw refuse(
      { option: 'prefix', value: String(prefix), expected },
      `prefix ${JSON.stringify(prefix)} is not allowed; ${expected}`,
    );
  }
  const ackWaitMs = wholeNumber('ackWaitMs', options.ackWaitMs, 30_000, 100);
  const pollMs = wholeNumber('pollMs', options.pollMs, 50, 1);
  if (pollMs >= ackWaitMs) {
    const expected = `must be below ackWaitMs (${ackWaitMs}): an empty queue is asked again every pollMs, and a fetch that slept through an ack wait would see redeliveries late`;
    throw refuse(
      { option: 'pollMs', value: String(pollMs), expected: `it ${expected}`, related: ['ackWaitMs'] },
      `pollMs (${pollMs}) ${expected}`,
    );
  }
  // Behind Sentinel a replica will be promoted one day: guard by default (replication.ts).
  const waitReplicas = wholeNumber(
    'waitReplicas',
    options.waitReplicas,
    server.kind === 'sentinel' ? 1 : 0,
    0,
  );
  const waitTimeoutMs = wholeNumber('waitTimeoutMs', options.waitTimeoutMs, 1_000, 1);
  const requestTimeoutMs = wholeNumber('requestTimeoutMs', options.requestTimeoutMs, 5_000, 1);
  if (waitReplicas > 0 && waitTimeoutMs >= requestTimeoutMs) {
    const expected = `must be below requestTimeoutMs (${requestTimeoutMs}): a write and its replication check are one operation, bounded by requestTimeoutMs`;
    throw refuse(
      {
        option: 'waitTimeoutMs',
        value: String(waitTimeoutMs),
        expected: `it ${expected}`,
        related: ['requestTimeoutMs'],
      },
      `waitTimeoutMs (${waitTimeoutMs}) ${expected}`,
    );
  }
  return {
    url,
    displayUrl,
    server,
    prefix,
    ackWaitMs,
    pollMs,
    priorityLanes: onOff('priorityLanes', options.priorityLanes),
    duplicateWindowMs: wholeNumber('duplicateWindowMs', options.duplicateWindowMs, 120_000, 1),
    connectTimeoutMs: wholeNumber('connectTimeoutMs', options.connectTimeoutMs, 5_000, 1),
    requestTimeoutMs,
    waitReplicas,
    waitTimeoutMs,
    stalledIntervalMs: Math.max(50, Math.floor(ackWaitMs / 2)),
  };
}

function serverOf(url: string, displayUrl: string, sentinelPassword: string | undefined): RedisServer {
  if (isSentinelUrl(url)) {
    const { sentinels, masterName, ...rest } = parseSentinelUrl(url, OWNER);
    return { kind: 'sentinel', target: { sentinels, masterName }, sentinelPassword, ...rest };
  }
  if (sentinelPassword !== undefined) {
    throw refuse(
      {
        option: 'sentinelPassword',
        value: '***',
        expected: `it is set but url ${JSON.stringify(displayUrl)} is not a redis+sentinel:// URL; drop it or name the sentinels in the url`,
        related: ['url'],
      },
      `sentinelPassword is set but url ${JSON.stringify(displayUrl)} is not a redis+sentinel:// URL; drop the option or name the sentinels in the url`,
    );
  }
  const badUrl = (problem: string): ConfigError =>
    refuse(
      { option: 'url', value: displayUrl, expected: `it ${problem}` },
      `url ${JSON.stringify(displayUrl)} ${problem}`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badUrl(
      'is not a URL; give redis://host:6379 (rediss:// for TLS, redis+sentinel://host:26379/<master name> through Sentinel)',
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw badUrl(
      `has scheme '${parsed.protocol}'; the Redis transport takes redis://, rediss://, redis+sentinel:// or rediss+sentinel://`,
    );
  }
  if (parsed.hostname === '') {
    throw badUrl('names no host; give redis://host:6379');
  }
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) {
    throw badUrl(`has path '/${db}'; the path is the database number (redis://host:6379/0)`);
  }
  return {
    kind: 'direct',
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db: db === '' ? 0 : Number(db),
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    tls: parsed.protocol === 'rediss:',
  };
}

function onOff(name: string, value: boolean | undefined): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    const shown = JSON.stringify(value);
    throw refuse(
      { option: name, value: shown, expected: 'it must be true or false' },
      `${name} must be true or false, got ${shown}`,
    );
  }
  return value;
}

function wholeNumber(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    const expected = `must be a whole number of at least ${min}`;
    throw refuse(
      { option: name, value: String(value), expected: `it ${expected}` },
      `${name} ${expected}, got ${String(value)}`,
    );
  }
  return value;
}
