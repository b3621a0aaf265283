/**
 * One ioredis connection with the store's policy:
 *
 * 1. While opening, it retries a refused or dropped connection only until `connectTimeoutMs`
 *    has passed, and not at all after a refused login or permission: open() then fails with an
 *    error naming the server (password masked), the cause and the fix, instead of hanging.
 * 2. Once open, it reconnects by itself, forever, with capped backoff, including when ioredis
 *    itself ended it (a race of its Sentinel failover detector, reviveEndedRedis).
 * 3. A command is never sent twice: a command in flight when the connection drops, or issued
 *    while it is down, fails at the next failed reconnect attempt (maxRetriesPerRequest 0,
 *    no automatic resend). Resending a script whose reply was lost could run it twice (a second
 *    checkpoint in the history, a finish reported as fenced), so the caller decides.
 * 4. Through Sentinel (a redis+sentinel:// URL), every connect and reconnect asks the sentinels
 *    for the primary, the connection drops as soon as a sentinel announces a new primary
 *    (failoverDetector), and a READONLY reply (a demoted primary still connected) drops it too:
 *    after a failover, no command goes on to the old primary.
 * 5. `generation` counts the connections made: a write and the WAIT after it (replication.ts)
 *    count only when both were answered on the same one.
 */
import { Redis } from 'ioredis';
import type { BatonError } from '@baton/core';
import { redisRetryDelay, reviveEndedRedis, sentinelSettings, watchRedisConnection } from '@baton/redis-kit';
import { redisCommandRefused, redisLoginRefused, redisUnavailable, refusedCommand } from './errors.js';
import type { ResolvedRedisStoreOptions } from './options.js';

/** How long close() waits for QUIT before it drops the socket. */
const QUIT_TIMEOUT_MS = 1_000;

type Phase = 'idle' | 'opening' | 'open' | 'closed';

/** A connection and its lifecycle. */
export interface StoreConnection {
  readonly redis: Redis;
  /** How many times the connection became ready (invariant 5). */
  readonly generation: () => number;
  /** Connects; rejects with a BackendUnavailableError, BackendAuthError or BackendPermissionError. */
  open(): Promise<void>;
  /** Quits (or drops the socket) and stops reconnecting. Safe to call twice. */
  close(): Promise<void>;
}

export function createConnection(
  options: ResolvedRedisStoreOptions,
  extra: { connectionName?: string } = {},
): StoreConnection {
  let phase: Phase = 'idle';
  let deadline = 0;

  // Invariants 1 and 2, and 4 below: the Redis transport's command connection has them too
  // (@baton/redis-kit).
  const retryStrategy = (attempt: number): number | null =>
    redisRetryDelay(attempt, phase, events.refused, deadline);
  const sentinel = options.sentinel;
  const redis = new Redis({
    ...(sentinel === undefined
      ? { host: options.host, port: options.port }
      : sentinelSettings(sentinel, sentinel.password, options.tls, retryStrategy)),
    db: options.db,
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(options.tls !== undefined && { tls: options.tls }),
    ...(extra.connectionName !== undefined && { connectionName: extra.connectionName }),
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy,
  });
  // Always listened to: ioredis prints unhandled 'error' events, and open() reports the last one.
  const events = watchRedisConnection(redis);
  // Invariant 2 against ioredis itself ending a Sentinel connection (@baton/redis-kit).
  reviveEndedRedis(redis, () => phase === 'open');

  const open = (): Promise<void> => {
    phase = 'opening';
    deadline = Date.now() + options.connectTimeoutMs;
    events.lastError = undefined;
    events.refused = false;
    return new Promise<void>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        redis.off('end', onEnd);
      };
      const onReady = (): void => {
        cleanup();
        phase = 'open';
        resolve();
      };
      const onEnd = (): void => {
        cleanup();
        phase = 'idle';
        reject(openFailure(options, events.lastError));
      };
      const timer = setTimeout(() => {
        cleanup();
        phase = 'idle';
        redis.disconnect();
        reject(openFailure(options, events.lastError));
      }, options.connectTimeoutMs);
      redis.once('ready', onReady);
      redis.once('end', onEnd);
      redis.connect().catch(() => undefined);
    });
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    phase = 'closed';
    closing ??= (async () => {
      if (redis.status === 'end') {
        if (options.sentinel !== undefined) redis.disconnect();
        return;
      }
      if (redis.status !== 'ready') {
        redis.disconnect();
        return;
      }
      const timer = setTimeout(() => redis.disconnect(), QUIT_TIMEOUT_MS);
      timer.unref();
      await redis.quit().catch(() => redis.disconnect());
      clearTimeout(timer);
      // quit() leaves the failover detector's sentinel subscriptions open, and they would keep the
      // process alive (ioredis issue 1362); disconnect() closes them.
      if (options.sentinel !== undefined) redis.disconnect();
    })();
    return closing;
  };

  return { redis, generation: () => events.generation, open, close };
}

/** The error open() rejects with: which server, what went wrong, what to do. */
function openFailure(options: ResolvedRedisStoreOptions, cause: Error | undefined): BatonError {
  const url = options.displayUrl;
  const message = cause?.message.replace(/^Ready check failed: /, '').replace(/\.$/, '') ?? '';
  if (/WRONGPASS|NOAUTH/.test(message)) {
    return redisLoginRefused(
      `cannot log in to Redis at ${url}: ${message}; check the user and password in BATON_STORE_URL ` +
        '(or the username/password options)',
      { cause },
    );
  }
  if (message.includes('NOPERM')) {
    const command = refusedCommand(message);
    return redisCommandRefused(
      command,
      `Redis at ${url} refused '${command ?? 'a command'}' while connecting (${message}); ` +
        `grant the store's ACL user +${command ?? '<command>'} (the README lists every command it needs)`,
      { cause },
    );
  }
  const code = (cause as { code?: unknown } | undefined)?.code;
  const reason = typeof code === 'string' ? code : message || 'no answer';
  return redisUnavailable(
    `cannot reach Redis at ${url} within ${options.connectTimeoutMs} ms: ${reason}; ` +
      'check BATON_STORE_URL (or the url option) and that Redis runs and accepts connections',
    { cause },
  );
}
