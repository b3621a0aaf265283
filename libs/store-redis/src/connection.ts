/**
 * One ioredis connection with the store's policy:
 *
 * 1. While opening, it retries a refused or dropped connection only until `connectTimeoutMs`
 *    has passed, and not at all after a refused login or permission: open() then fails with an
 *    error naming the server (password masked), the cause and the fix, instead of hanging.
 * 2. Once open, it reconnects by itself, forever, with capped backoff.
 * 3. A command is never sent twice: a command in flight when the connection drops, or issued
 *    while it is down, fails at the next failed reconnect attempt (maxRetriesPerRequest 0,
 *    no automatic resend). Resending a script whose reply was lost could run it twice (a second
 *    checkpoint in the history, a finish reported as fenced), so the caller decides.
 */
import { Redis } from 'ioredis';
import type { BatonError } from '@baton/core';
import { RedisAuthError, RedisPermissionError, RedisUnavailableError, refusedCommand } from './errors.js';
import type { ResolvedRedisStoreOptions } from './options.js';

/** Backoff of reconnect attempts once open: 100 ms doubling up to this. */
const MAX_RECONNECT_DELAY_MS = 2_000;
/** Pause between attempts while opening; short, because open() has a deadline of its own. */
const OPEN_RETRY_DELAY_MS = 200;
/** How long close() waits for QUIT before it drops the socket. */
const QUIT_TIMEOUT_MS = 1_000;

type Phase = 'idle' | 'opening' | 'open' | 'closed';

/** A connection and its lifecycle. */
export interface StoreConnection {
  readonly redis: Redis;
  /** Connects; rejects with a RedisUnavailableError, RedisAuthError or RedisPermissionError. */
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
  let lastError: Error | undefined;
  let refused = false;

  const redis = new Redis({
    host: options.host,
    port: options.port,
    db: options.db,
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(options.tls !== undefined && { tls: options.tls }),
    ...(extra.connectionName !== undefined && { connectionName: extra.connectionName }),
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => {
      if (phase === 'open') return Math.min(100 * 2 ** Math.min(attempt - 1, 10), MAX_RECONNECT_DELAY_MS);
      if (phase !== 'opening' || refused || Date.now() + OPEN_RETRY_DELAY_MS >= deadline) return null;
      return OPEN_RETRY_DELAY_MS;
    },
  });
  // Always listened to: ioredis prints unhandled 'error' events, and open() reports the last one.
  redis.on('error', (err: Error) => {
    lastError = err;
    if (/WRONGPASS|NOAUTH|NOPERM/.test(err.message)) refused = true;
  });

  const open = (): Promise<void> => {
    phase = 'opening';
    deadline = Date.now() + options.connectTimeoutMs;
    lastError = undefined;
    refused = false;
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
        reject(openFailure(options, lastError));
      };
      const timer = setTimeout(() => {
        cleanup();
        phase = 'idle';
        redis.disconnect();
        reject(openFailure(options, lastError));
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
      if (redis.status === 'end') return;
      if (redis.status !== 'ready') {
        redis.disconnect();
        return;
      }
      const timer = setTimeout(() => redis.disconnect(), QUIT_TIMEOUT_MS);
      timer.unref();
      await redis.quit().catch(() => redis.disconnect());
      clearTimeout(timer);
    })();
    return closing;
  };

  return { redis, open, close };
}

/** The error open() rejects with: which server, what went wrong, what to do. */
function openFailure(options: ResolvedRedisStoreOptions, cause: Error | undefined): BatonError {
  const url = options.displayUrl;
  const message = cause?.message.replace(/^Ready check failed: /, '').replace(/\.$/, '') ?? '';
  if (/WRONGPASS|NOAUTH/.test(message)) {
    return new RedisAuthError(
      `cannot log in to Redis at ${url}: ${message}; check the user and password in BATON_STORE_URL ` +
        '(or the username/password options)',
      { cause },
    );
  }
  if (message.includes('NOPERM')) {
    const command = refusedCommand(message);
    return new RedisPermissionError(
      command,
      `Redis at ${url} refused '${command ?? 'a command'}' while connecting (${message}); ` +
        `grant the store's ACL user +${command ?? '<command>'} (the README lists every command it needs)`,
      { cause },
    );
  }
  const code = (cause as { code?: unknown } | undefined)?.code;
  const reason = typeof code === 'string' ? code : message || 'no answer';
  return new RedisUnavailableError(
    `cannot reach Redis at ${url} within ${options.connectTimeoutMs} ms: ${reason}; ` +
      'check BATON_STORE_URL (or the url option) and that Redis runs and accepts connections',
    { cause },
  );
}
