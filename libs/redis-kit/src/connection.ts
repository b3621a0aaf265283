/**
 * Connection settings the Redis adapters (the store, the transport) share, with no ioredis import:
 *
 * 1. Retries (ioredis `retryStrategy`): an open connection reconnects by itself, forever, with
 *    capped backoff; one being opened retries only until its deadline, and not at all after a
 *    refused login or permission (as its events said, watchRedisConnection), so opening fails
 *    naming the cause instead of hanging; any other (not yet opened, closed) does not reconnect.
 * 2. Through Sentinel (a redis+sentinel:// URL, sentinel-url.ts), every connect and reconnect asks
 *    the sentinels for the primary, the connection drops as soon as a sentinel announces a new
 *    primary (failoverDetector), and a READONLY reply (a demoted primary still connected) drops it
 *    too, without resending: after a failover, no command goes on to the old primary.
 * 3. A connection its owner holds open never stays ended: ioredis can end one by itself (below,
 *    reviveEndedRedis), and it is connected again with the same backoff as a reconnect.
 */
import type { ConnectionOptions } from 'node:tls';
import type { SentinelTarget } from './sentinel-url.js';

/** Backoff of reconnect attempts once open: 100 ms doubling up to this. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** Pause between attempts while opening; short, because opening has a deadline of its own. */
const OPEN_RETRY_DELAY_MS = 200;

/** The delay before reconnect attempt `attempt` (from 1) of an open connection (invariant 1). */
export function redisReconnectDelay(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt - 1, 10), MAX_RECONNECT_DELAY_MS);
}

/**
 * The delay before reconnect attempt `attempt` (from 1), or null for none (invariant 1). `phase`
 * is the connection's: `open`, `opening` (until `deadline`, a Date.now() time) or anything else;
 * `refused` says the server refused the login or a permission while opening.
 */
export function redisRetryDelay(
  attempt: number,
  phase: string,
  refused: boolean,
  deadline: number,
): number | null {
  if (phase === 'open') return redisReconnectDelay(attempt);
  if (phase !== 'opening' || refused || Date.now() + OPEN_RETRY_DELAY_MS >= deadline) return null;
  return OPEN_RETRY_DELAY_MS;
}

/** What a connection's events said, for its retry strategy and its open failure. */
export interface RedisConnectionEvents {
  /** How many times the connection became ready. */
  generation: number;
  /** The last error it emitted. */
  lastError: Error | undefined;
  /** An error refused the login or a permission (WRONGPASS, NOAUTH, NOPERM): invariant 1. */
  refused: boolean;
}

/**
 * Listens to `redis`'s ready and error events from now on, into the returned record (which the
 * caller may reset before opening). Always listening to 'error' also keeps ioredis from printing
 * its errors as unhandled.
 */
export function watchRedisConnection(redis: {
  on(event: 'ready' | 'error', listener: (err: Error) => void): unknown;
}): RedisConnectionEvents {
  const events: RedisConnectionEvents = { generation: 0, lastError: undefined, refused: false };
  redis.on('ready', () => {
    events.generation++;
  });
  redis.on('error', (err: Error) => {
    events.lastError = err;
    if (/WRONGPASS|NOAUTH|NOPERM/.test(err.message)) events.refused = true;
  });
  return events;
}

/** The ioredis options of Sentinel mode (invariant 2). */
export interface SentinelSettings {
  sentinels: Array<{ host: string; port: number }>;
  name: string;
  role: 'master';
  sentinelPassword?: string;
  enableTLSForSentinelMode?: boolean;
  sentinelTLS?: ConnectionOptions;
  sentinelRetryStrategy?: (attempt: number) => number | null;
  failoverDetector: boolean;
  reconnectOnError: (err: Error) => 1 | false;
}

/**
 * The ioredis options that find the primary through `target`'s sentinels (invariant 2): with the
 * sentinels' own `password`, TLS to the sentinels with the data nodes' `tls` options, and
 * `retryStrategy` asked when no sentinel names a reachable primary (all down, or mid-failover).
 */
export function sentinelSettings(
  target: SentinelTarget,
  password: string | undefined,
  tls: ConnectionOptions | undefined,
  retryStrategy?: (attempt: number) => number | null,
): SentinelSettings {
  return {
    sentinels: target.sentinels,
    name: target.masterName,
    role: 'master',
    ...(password !== undefined && { sentinelPassword: password }),
    ...(tls !== undefined && { enableTLSForSentinelMode: true, sentinelTLS: tls }),
    ...(retryStrategy !== undefined && { sentinelRetryStrategy: retryStrategy }),
    failoverDetector: true,
    // A demoted primary refuses writes with READONLY: reconnect (1), never resend (2).
    reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 1 : false),
  };
}

/** The part of an ioredis client that reviveEndedRedis uses. */
export interface RevivableRedis {
  readonly status: string;
  on(event: 'ready' | 'end', listener: () => void): unknown;
  connect(): Promise<void>;
}

/**
 * Invariant 3: connects `redis` again, after the reconnect backoff, whenever it ends while
 * `held()` says its owner still holds it open. Ending is meant to happen only when the owner
 * closes it (or gives up opening it), yet ioredis 5 ends a Sentinel connection for good in one
 * race: when the primary dies, the previous connection's failover detector stays subscribed, and
 * if a sentinel announces the promotion while the reconnect is asking the sentinels for the
 * primary, that detector disconnects the connector mid-connect. The connect then fails with
 * "Connection is closed." and no retry follows, so every later command failed the same way, for
 * good (seen in CI after a SIGKILLed primary). `held()` is asked again before each attempt, so
 * a close in the meantime stops it; the timer does not keep a process alive.
 */
export function reviveEndedRedis(redis: RevivableRedis, held: () => boolean): void {
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  redis.on('ready', () => {
    attempt = 0;
  });
  redis.on('end', () => {
    if (timer !== undefined || !held()) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (held() && redis.status === 'end') redis.connect().catch(() => undefined);
    }, redisReconnectDelay(++attempt));
    timer.unref();
  });
}
