/**
 * The transport's connections to Redis. Two kinds, with different policies:
 *
 * 1. The command connection (journal, group logs, dead letters) is the transport's own ioredis
 *    client. While opening it retries only until `connectTimeoutMs`, and not at all after a
 *    refused login, so connect() fails naming the server and the cause instead of hanging. Once
 *    open it reconnects by itself with capped backoff, until close(), even when ioredis itself
 *    ended it (a race of its Sentinel failover detector: reviveEndedRedis). It never resends a command on its own
 *    (no automatic resend, no retries per request): a journal append whose reply was lost is
 *    retried by the journal code, whose script recognises its own earlier landing (journal.ts).
 * 2. BullMQ's connections (each lane's queue and worker) are made here from the same server
 *    settings and handed to BullMQ (openBullConnection), so the same revival applies to them: a
 *    queue connection that the Sentinel race ended refused every enqueue with "Connection is
 *    closed." for good (seen in CI after a SIGKILLed primary). BullMQ requires
 *    `maxRetriesPerRequest: null` there (its commands wait for a reconnect), so every call the
 *    transport makes through BullMQ is bounded by {@link withTimeout} instead: no operation waits
 *    on Redis for longer than `requestTimeoutMs`. BullMQ does not close a connection it was
 *    handed; the transport's tear-down does.
 */
import { Redis, type RedisOptions } from 'ioredis';
import {
  redisReconnectDelay,
  redisRetryDelay,
  reviveEndedRedis,
  sentinelSettings,
  watchRedisConnection,
} from '@baton/redis-kit';
import { BackendUnsupportedError } from '@baton/core/adapter';
import type { ResolvedRedisTransportOptions } from './options.js';
import { redisTooOld, timedOut, toRedisTransportError, type ErrorContext } from './errors.js';

/** The oldest server with what the transport uses: `XADD key <ms>-*` (7.0) and `(`-exclusive XRANGE (6.2). */
export const MIN_REDIS_MAJOR = 7;

/** The command connection, and how many times it became ready (replication.ts compares them). */
export interface CommandConnection {
  readonly redis: Redis;
  generation(): number;
  /** Quits (or drops the socket after `timeoutMs`) and stops reconnecting. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * The server settings, for ioredis and for BullMQ alike. Through Sentinel every connect and
 * reconnect asks the sentinels for the primary, the connection drops as soon as a sentinel
 * announces a new one (failoverDetector), and a READONLY reply (a demoted primary still
 * connected) drops it too, without resending: after a failover no command goes to the old primary
 * (the Redis store's settings too, from `@baton/redis-kit`).
 */
export function serverSettings(
  options: ResolvedRedisTransportOptions,
  retryStrategy?: (attempt: number) => number | null,
): RedisOptions {
  const { server } = options;
  const common: RedisOptions = {
    db: server.db,
    ...(server.username !== undefined && { username: server.username }),
    ...(server.password !== undefined && { password: server.password }),
    ...(server.tls && { tls: {} }),
    connectTimeout: options.connectTimeoutMs,
  };
  if (server.kind === 'direct') return { ...common, host: server.host, port: server.port };
  return {
    ...common,
    ...sentinelSettings(server.target, server.sentinelPassword, server.tls ? {} : undefined, retryStrategy),
  };
}

/** The settings BullMQ's connections are built from (invariant 2). */
export function bullConnection(options: ResolvedRedisTransportOptions): RedisOptions {
  const retryStrategy = redisReconnectDelay;
  return { ...serverSettings(options, retryStrategy), maxRetriesPerRequest: null, retryStrategy };
}

/**
 * A connection for BullMQ (invariant 2), connected again whenever it ends while `held()`; the
 * caller closes it after BullMQ's queue or worker (closeBullConnection).
 */
export function openBullConnection(options: ResolvedRedisTransportOptions, held: () => boolean): Redis {
  const redis = new Redis(bullConnection(options));
  // BullMQ reports its connection's errors through the queue's and worker's 'error' events.
  redis.on('error', () => undefined);
  reviveEndedRedis(redis, held);
  return redis;
}

/**
 * Opens the command connection (invariant 1) and checks the server's version. Rejects with the
 * transport's error naming the server and the cause.
 */
export async function openCommandConnection(
  options: ResolvedRedisTransportOptions,
): Promise<CommandConnection> {
  let phase: 'opening' | 'open' | 'closed' = 'opening';
  const deadline = Date.now() + options.connectTimeoutMs;
  const retryStrategy = (attempt: number): number | null =>
    redisRetryDelay(attempt, phase, events.refused, deadline);
  const redis = new Redis({
    // With Sentinel, the same strategy when no sentinel names a reachable primary.
    ...serverSettings(options, retryStrategy),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy,
  });
  const events = watchRedisConnection(redis);
  reviveEndedRedis(redis, () => phase === 'open');
  const context = { url: options.displayUrl, operation: 'connect' };
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        redis.once('ready', () => resolve());
        redis.once('end', () =>
          reject(events.lastError ?? new Error('the connection ended before it was ready')),
        );
        redis.connect().catch(() => undefined);
      }),
      options.connectTimeoutMs,
      context,
    );
    phase = 'open';
    await checkVersion(redis, options.displayUrl);
    const close = async (timeoutMs: number): Promise<void> => {
      phase = 'closed';
      await withTimeout(redis.quit(), timeoutMs, { url: options.displayUrl, operation: 'close' }).catch(
        () => undefined,
      );
      // Also closes the failover detector's sentinel connections, which quit() leaves open.
      redis.disconnect();
    };
    return { redis, generation: () => events.generation, close };
  } catch (err) {
    phase = 'closed';
    redis.disconnect();
    // The version check's own error says more than any socket error; otherwise the last socket
    // error (ECONNREFUSED, WRONGPASS) says more than "no answer within".
    throw toRedisTransportError(
      err instanceof BackendUnsupportedError ? err : (events.lastError ?? err),
      context,
    );
  }
}

async function checkVersion(redis: Redis, displayUrl: string): Promise<void> {
  const info = await redis.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  const major = Number.parseInt(version, 10);
  if (!(major >= MIN_REDIS_MAJOR)) {
    throw redisTooOld(
      version,
      `redis transport: the server at ${displayUrl} runs Redis ${version}; the transport needs Redis ${MIN_REDIS_MAJOR}.0 or newer (stream ids <ms>-*); upgrade the server or use another transport`,
    );
  }
}

/**
 * Rejects with a retryable unavailable error when `work` has not settled after `ms`; `work` itself
 * goes on (a command already sent cannot be called back) and its late outcome is ignored: the
 * callers are operations whose repetition is harmless or recognised (see each caller).
 */
export function withTimeout<T>(work: Promise<T>, ms: number, context: ErrorContext): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(context, ms)), ms);
  });
  work.catch(() => undefined);
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}
