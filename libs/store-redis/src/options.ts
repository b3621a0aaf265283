/**
 * Options of {@link redisStore}, resolved once into a complete {@link ResolvedRedisStoreOptions}
 * so a typo fails at creation, never on the first failover.
 */
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from '@baton/core';
import { maskUrlSecret, invalidOption, type ConfigErrorFields } from '@baton/core/adapter';
import { isSentinelUrl, parseSentinelUrl, type SentinelTarget } from './sentinel-url.js';

/** The URL used when none is given: a Redis on this machine. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** The prefix of every key the store touches when none is given. */
export const DEFAULT_KEY_PREFIX = 'baton:';
/** How long connect() tries before it gives up, when not configured. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Time a worker gets to reconnect its presence after Redis restarted, when not configured: above
 * the 2 s cap of the reconnect backoff, so every live worker has retried at least twice.
 */
export const DEFAULT_PRESENCE_GRACE_MS = 5_000;
/**
 * How long a guarded write waits for its replicas when not configured (replication.ts): far
 * above a healthy replica's acknowledgement (a millisecond or two on a LAN), short enough that
 * a worker whose replica is gone learns it before its lease (5 s by default) runs out.
 */
export const DEFAULT_WAIT_TIMEOUT_MS = 1_000;

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /**
   * `redis://[user:password@]host[:port][/db]`, or `rediss://…` for TLS. User and password are
   * percent-decoded; `username` and `password` options override them. Through Redis Sentinel:
   * `redis+sentinel://[user:password@]host:port[,host:port…]/<master name>[/<db>]` (or
   * `rediss+sentinel://` for TLS), the user and password being the data nodes'.
   * @defaultValue 'redis://127.0.0.1:6379'
   */
  url?: string;
  /**
   * Prefix of every key the store reads or writes. Stores with different prefixes share nothing,
   * so one Redis can hold several Baton installations (or tests).
   * @defaultValue 'baton:'
   */
  keyPrefix?: string;
  /**
   * TLS options handed to Node's `tls.connect` (CA, client certificate, servername…). Setting
   * them turns TLS on; a `rediss://` URL turns it on with Node's defaults.
   * @defaultValue undefined (TLS only for rediss://)
   */
  tls?: ConnectionOptions;
  /**
   * ACL user name; overrides the URL's.
   * @defaultValue the URL's user, else the server's `default` user
   */
  username?: string;
  /**
   * Password (of the ACL user, or `requirepass`); overrides the URL's. Never appears in messages.
   * @defaultValue the URL's password, else none
   */
  password?: string;
  /**
   * How long connect() (and registering a worker's presence connection) keeps trying before it
   * fails with an error naming the server.
   * @defaultValue 5000
   */
  connectTimeoutMs?: number;
  /**
   * After Redis restarts (or fails over), every connection is new: for this long after the
   * server started, or after the first dead-worker scan on a new server instance (a promoted
   * replica has run for long), presence.reapDead leaves alone workers registered before, whose
   * presence connections may not have reconnected yet. Workers registered since are judged at once.
   * @defaultValue 5000
   */
  presenceGraceMs?: number;
  /**
   * Password of the sentinels themselves (`requirepass` in sentinel.conf), for a
   * `redis+sentinel://` URL; the URL's password is the data nodes'.
   * @defaultValue none
   */
  sentinelPassword?: string;
  /**
   * The replicas that must acknowledge a write that moves a run (a lease claim, a checkpoint, a
   * finish, a suspend, a signal, a stored payload) before the store reports it done: `WAIT
   * <waitReplicas> <waitTimeoutMs>` after it (replication.ts explains why). 0 turns the guard off.
   * @defaultValue 1 with a `redis+sentinel://` URL, else 0
   */
  waitReplicas?: number;
  /**
   * How long a guarded write waits for its `waitReplicas` acknowledgements before it fails with
   * a retryable BackendNotDurableError (BATON_REDIS_NOT_REPLICATED).
   * @defaultValue 1000
   */
  waitTimeoutMs?: number;
}

/** {@link RedisStoreOptions} after defaults and validation. */
export interface ResolvedRedisStoreOptions {
  /** The URL with its password masked: the only form that appears in messages. */
  displayUrl: string;
  host: string;
  port: number;
  db: number;
  username: string | undefined;
  password: string | undefined;
  tls: ConnectionOptions | undefined;
  keyPrefix: string;
  connectTimeoutMs: number;
  presenceGraceMs: number;
  /** Sentinel mode: where to ask for the primary; undefined for a plain redis:// URL. */
  sentinel: (SentinelTarget & { password: string | undefined }) | undefined;
  waitReplicas: number;
  waitTimeoutMs: number;
}

const KNOWN_OPTIONS = new Set([
  'url',
  'keyPrefix',
  'tls',
  'username',
  'password',
  'connectTimeoutMs',
  'presenceGraceMs',
  'sentinelPassword',
  'waitReplicas',
  'waitTimeoutMs',
]);
/** What the store's ConfigErrors name as their component. */
const COMPONENT = 'redisStore';

/** The ConfigError for one option: `redisStore: <message>`, with the option's fields. */
function refuse(
  fields: Omit<ConfigErrorFields, 'component'> & { option: string; value: string; expected: string },
  message: string,
  cause?: unknown,
): ConfigError {
  return invalidOption(
    { component: COMPONENT, ...fields },
    message,
    cause === undefined ? undefined : { cause },
  );
}

const EXPECTED_FORM =
  'expected redis://[user:password@]host[:port][/db], rediss://… for TLS, or redis+sentinel://host:port[,host:port…]/<master name>';

/** Validates `options` and fills in defaults; throws ConfigError naming the option and the fix. */
export function resolveRedisStoreOptions(options: RedisStoreOptions = {}): ResolvedRedisStoreOptions {
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      const expected = `the options are ${[...KNOWN_OPTIONS].join(', ')}`;
      throw new ConfigError(`${COMPONENT}: unknown option '${name}'; ${expected}`, {
        component: COMPONENT,
        option: name,
        expected,
      });
    }
  }
  const url = optionalString(options, 'url') ?? DEFAULT_REDIS_URL;
  const sentinelMode = isSentinelUrl(url);
  const parsed = sentinelMode ? sentinelParsed(url) : parseRedisUrl(url);
  const keyPrefix = optionalString(options, 'keyPrefix') ?? DEFAULT_KEY_PREFIX;
  if (keyPrefix === '') {
    const expected = "use a prefix such as 'baton:' so Baton's keys stay apart from other data";
    throw refuse({ option: 'keyPrefix', value: '', expected }, `keyPrefix is empty; ${expected}`);
  }
  const connectTimeoutMs = wholeMs(options, 'connectTimeoutMs', DEFAULT_CONNECT_TIMEOUT_MS, 1);
  const presenceGraceMs = wholeMs(options, 'presenceGraceMs', DEFAULT_PRESENCE_GRACE_MS, 0);
  const waitTimeoutMs = wholeMs(options, 'waitTimeoutMs', DEFAULT_WAIT_TIMEOUT_MS, 1);
  const waitReplicas = wholeNumber(options, 'waitReplicas', sentinelMode ? 1 : 0);
  const sentinelPassword = optionalString(options, 'sentinelPassword');
  if (sentinelPassword !== undefined && !sentinelMode) {
    throw refuse(
      {
        option: 'sentinelPassword',
        value: '***',
        expected:
          'it is set but the url is not a redis+sentinel:// URL; drop it or name the sentinels in the url',
        related: ['url'],
      },
      'sentinelPassword is set but the url is not a redis+sentinel:// URL; drop the option or name the sentinels in the url',
    );
  }
  if (options.tls !== undefined && (typeof options.tls !== 'object' || options.tls === null)) {
    const expected =
      'an object of Node TLS options (e.g. { ca }), or left out; a rediss:// URL turns TLS on by itself';
    throw refuse(
      { option: 'tls', value: typeof options.tls, expected: `it must be ${expected}` },
      `tls must be ${expected}`,
    );
  }
  return {
    displayUrl: maskUrl(url),
    host: parsed.host,
    port: parsed.port,
    db: parsed.db,
    username: optionalString(options, 'username') ?? parsed.username,
    password: optionalString(options, 'password') ?? parsed.password,
    tls: options.tls ?? (parsed.tls ? {} : undefined),
    keyPrefix,
    connectTimeoutMs,
    presenceGraceMs,
    sentinel: parsed.sentinel === undefined ? undefined : { ...parsed.sentinel, password: sentinelPassword },
    waitReplicas,
    waitTimeoutMs,
  };
}

function sentinelParsed(url: string): ParsedUrl {
  const { sentinels, masterName, ...rest } = parseSentinelUrl(url);
  // host and port are the first sentinel's: only messages use them, the primary is asked for.
  const first = sentinels[0] ?? { host: '', port: 0 };
  return { ...rest, host: first.host, port: first.port, sentinel: { sentinels, masterName } };
}

function wholeNumber(options: RedisStoreOptions, name: 'waitReplicas', fallback: number): number {
  const value: unknown = options[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw refuse(
      {
        option: name,
        value: String(value),
        expected: 'use a whole number of replicas (0 turns the guard off), e.g. 1',
      },
      `${name} is ${String(value)}; use a whole number of replicas (0 turns the guard off), e.g. 1`,
    );
  }
  return value;
}

function wholeMs(
  options: RedisStoreOptions,
  name: 'connectTimeoutMs' | 'presenceGraceMs' | 'waitTimeoutMs',
  fallback: number,
  min: number,
): number {
  const value: unknown = options[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    const kind = min > 0 ? 'a positive' : 'a non-negative';
    const expected = `use ${kind} whole number of milliseconds, e.g. ${fallback}`;
    throw refuse(
      { option: name, value: String(value), expected },
      `${name} is ${String(value)}; ${expected}`,
    );
  }
  return value;
}

interface ParsedUrl {
  host: string;
  port: number;
  db: number;
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
  sentinel?: SentinelTarget;
}

function parseRedisUrl(url: string): ParsedUrl {
  const shown = maskUrl(url);
  const invalid = (reason: string): ConfigError =>
    refuse(
      {
        option: 'url',
        value: shown,
        expected: `it is not a valid Redis URL: ${reason}; ${EXPECTED_FORM}`,
      },
      `url '${shown}' is not a valid Redis URL: ${reason}; ${EXPECTED_FORM}`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (err) {
    throw refuse(
      { option: 'url', value: shown, expected: `it cannot be parsed; ${EXPECTED_FORM}` },
      `url '${shown}' cannot be parsed; ${EXPECTED_FORM}`,
      err,
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw invalid(`the scheme is '${parsed.protocol.replace(/:$/, '')}'`);
  }
  if (parsed.hostname === '') throw invalid('it names no host');
  if (parsed.search !== '' || parsed.hash !== '') {
    throw invalid('query strings and fragments are not supported (put the database number in the path)');
  }
  const path = parsed.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,5}$/.test(path)) throw invalid(`the path '/${path}' is not a database number`);
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db: path === '' ? 0 : Number(path),
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    tls: parsed.protocol === 'rediss:',
  };
}

/**
 * The URL with any password replaced by `***`, for messages. Works on malformed URLs too: the
 * part between `://` and the last `@` is user information whatever else is wrong.
 */
export function maskUrl(url: string): string {
  return maskUrlSecret(url);
}

function optionalString(
  options: RedisStoreOptions,
  name: 'url' | 'keyPrefix' | 'username' | 'password' | 'sentinelPassword',
) {
  const value: unknown = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    const shown = name === 'password' || name === 'sentinelPassword' ? typeof value : JSON.stringify(value);
    throw refuse(
      { option: name, value: shown, expected: 'it must be a string' },
      `${name} must be a string, got ${shown}`,
    );
  }
  return value;
}
