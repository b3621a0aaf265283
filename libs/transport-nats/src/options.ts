/**
 * Options of {@link natsTransport}, resolved once into a complete
 * {@link ResolvedNatsTransportOptions} so a typo fails when the transport is created, never on
 * the first failover.
 */
import type { NodeConnectionOptions } from '@nats-io/transport-node';
import { ConfigError } from '@baton/core';
import { invalidOption } from '@baton/core/adapter';
import { parseServers } from './server-urls.js';
import { resolveCredentials, type NatsCredentials } from './credentials.js';

/** The server used when none is given: a NATS on this machine. */
export const DEFAULT_NATS_SERVERS = 'nats://127.0.0.1:4222';
/** The prefix of every stream, subject and consumer name when none is given. */
export const DEFAULT_NATS_PREFIX = 'baton';
/** How long connect() waits, per set-up step, for a JetStream cluster to elect its leaders. */
export const LEADER_WAIT_MS = 20_000;

/**
 * TLS options of the Node client: `ca`/`caFile`, `cert`/`certFile`, `key`/`keyFile` (PEM text or
 * paths), `rejectUnauthorized`, `handshakeFirst`.
 */
export type NatsTlsOptions = NonNullable<NodeConnectionOptions['tls']>;

/** Options of {@link natsTransport}. */
export interface NatsTransportOptions {
  /**
   * One server URL, several separated by commas, or an array: `nats://host:port`, `tls://host:port`
   * (TLS required), `nats://user:password@host` or `nats://token@host`. Credentials in a URL are
   * used when no credential option is set.
   * @defaultValue 'nats://127.0.0.1:4222'
   */
  servers?: string | string[];
  /**
   * User name for user/password authentication; requires `pass`.
   * @defaultValue the URL's user, else none
   */
  user?: string;
  /**
   * Password for `user`. Never appears in messages.
   * @defaultValue the URL's password, else none
   */
  pass?: string;
  /**
   * Token for token authentication. Never appears in messages.
   * @defaultValue the URL's token, else none
   */
  token?: string;
  /**
   * Path of a `.creds` file (user JWT and NKey seed, as `nsc` writes it); read at connect().
   * @defaultValue none
   */
  credsFile?: string;
  /**
   * The content of a `.creds` file, for deployments that mount secrets as values.
   * @defaultValue none
   */
  creds?: string;
  /**
   * An NKey user seed (`SU…`) for NKey authentication.
   * @defaultValue none
   */
  nkeySeed?: string;
  /**
   * TLS options (`ca`/`caFile`, `cert`/`certFile`, `key`/`keyFile`, `rejectUnauthorized`,
   * `handshakeFirst`); setting them requires TLS. A tls:// URL requires it with Node's defaults.
   * @defaultValue undefined (TLS only for tls:// URLs, or when the server demands it)
   */
  tls?: NatsTlsOptions;
  /**
   * Names everything the transport creates: streams `<PREFIX>_RUNS`, `<PREFIX>_JOURNAL`,
   * `<PREFIX>_DLQ`, subjects `<prefix>.runs`, `<prefix>.journal.<runId>`, `<prefix>.dlq`, and the
   * consumer `<prefix>-workers`. Transports with different prefixes share nothing.
   * @defaultValue 'baton'
   */
  prefix?: string;
  /**
   * How long a fetched run message may stay unacked before JetStream redelivers it (the
   * consumer's ack_wait). Longer than the time a worker needs to take a run's lease.
   * @defaultValue 30000
   */
  ackWaitMs?: number;
  /**
   * Where JetStream keeps the streams. `memory` loses everything when the server restarts; use it
   * for tests only.
   * @defaultValue 'file'
   */
  storage?: 'file' | 'memory';
  /**
   * How many servers of a cluster keep a copy of each stream (1, 3 or 5 in practice).
   * @defaultValue 1
   */
  replicas?: number;
  /**
   * Sets up and reads the run queue's priority lanes, the streams `<PREFIX>_RUNS_HIGH` and
   * `<PREFIX>_RUNS_LOW` (docs/priorities.md). Off, the run queue is the runs stream alone, exactly
   * as before priorities, and a start at `high` or `low` is refused with a ConfigError. Opt-in
   * because a restricted NATS user must be granted the lanes first. Turn it on for the workers,
   * then the producers.
   * @defaultValue false
   */
  priorityLanes?: boolean;
  /**
   * How long an enqueue's `msgId` suppresses a second enqueue with the same id (the run
   * stream's duplicate_window).
   * @defaultValue 120000
   */
  duplicateWindowMs?: number;
  /**
   * How many run messages may be delivered and unacked at once across all workers (the
   * consumer's max_ack_pending); beyond it, fetches wait.
   * @defaultValue 10000
   */
  maxAckPending?: number;
  /**
   * How long connect() may take to reach a server before it fails naming it.
   * @defaultValue 5000
   */
  connectTimeoutMs?: number;
  /**
   * How long one JetStream request (publish acknowledgement, stream or consumer call, ack) may
   * take before the operation fails as unavailable.
   * @defaultValue 5000
   */
  requestTimeoutMs?: number;
  /**
   * How long connect() waits for a JetStream cluster between leaders (a node restarting, a
   * partition healing: JetStream answers "temporarily unavailable", "not leader" or nothing) before
   * it fails; each set-up step (JetStream, the streams, the object store) waits up to this.
   * @defaultValue 20000
   */
  leaderWaitMs?: number;
  /**
   * The connection's name, shown by the server's monitoring (`connz`).
   * @defaultValue 'baton-<prefix>'
   */
  name?: string;
}

/** {@link NatsTransportOptions} after defaults and validation. */
export interface ResolvedNatsTransportOptions {
  /** `nats://host:port` of each server, without credentials. */
  servers: string[];
  /** The servers with secrets masked: the only form that appears in messages. */
  displayServers: string;
  credentials: NatsCredentials;
  /** TLS options, or undefined to let the server decide. */
  tls: NatsTlsOptions | undefined;
  prefix: string;
  ackWaitMs: number;
  storage: 'file' | 'memory';
  replicas: number;
  priorityLanes: boolean;
  duplicateWindowMs: number;
  maxAckPending: number;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  leaderWaitMs: number;
  name: string;
  /**
   * The stream and consumer settings the caller gave explicitly. Only these are applied to
   * streams and a consumer that already exist: a producer built with defaults must not reset
   * the ack wait the workers were configured with.
   */
  explicitSettings: ReadonlySet<StreamSetting>;
}

/** Options that configure the streams and the consumer rather than this process. */
export type StreamSetting = 'storage' | 'replicas' | 'duplicateWindowMs' | 'ackWaitMs' | 'maxAckPending';
const STREAM_SETTINGS: readonly StreamSetting[] = [
  'storage',
  'replicas',
  'duplicateWindowMs',
  'ackWaitMs',
  'maxAckPending',
];

/** The options that say how to connect, shared by every NATS client of Baton (transport, object store). */
export const NATS_CONNECTION_OPTIONS = [
  'servers',
  'user',
  'pass',
  'token',
  'credsFile',
  'creds',
  'nkeySeed',
  'tls',
  'connectTimeoutMs',
  'requestTimeoutMs',
  'leaderWaitMs',
] as const;

const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  ...NATS_CONNECTION_OPTIONS,
  'prefix',
  'ackWaitMs',
  'storage',
  'replicas',
  'priorityLanes',
  'duplicateWindowMs',
  'maxAckPending',
  'name',
]);

/**
 * Lower case because stream names are the prefix upper-cased: two prefixes differing only in case
 * would share streams but not subjects. No dots or wildcards: the prefix is one subject token.
 */
const PREFIX_PATTERN = /^[a-z][a-z0-9_-]{0,47}$/;

/** What the transport's ConfigErrors name as their component. */
const COMPONENT = 'natsTransport';

/** Validates `options` and fills in defaults; throws ConfigError naming the option and the fix. */
export function resolveNatsTransportOptions(
  options: NatsTransportOptions = {},
): ResolvedNatsTransportOptions {
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      const expected = `the options are ${[...KNOWN_OPTIONS].join(', ')}`;
      throw new ConfigError(`natsTransport: unknown option '${name}'; ${expected}`, {
        component: COMPONENT,
        option: name,
        expected,
      });
    }
  }
  const servers = options.servers ?? DEFAULT_NATS_SERVERS;
  if (
    typeof servers !== 'string' &&
    !(Array.isArray(servers) && servers.every((s) => typeof s === 'string'))
  ) {
    const expected = `a URL string or an array of them, e.g. '${DEFAULT_NATS_SERVERS}'`;
    throw invalidOption(
      { component: COMPONENT, option: 'servers', value: typeof servers, expected },
      `servers must be ${expected}`,
    );
  }
  const parsed = parseServers(servers);
  const prefix = options.prefix ?? DEFAULT_NATS_PREFIX;
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    const expected =
      "is not a safe name; use 1-48 lower-case letters, digits, '-' and '_', starting with a letter " +
      "(e.g. 'baton'): it becomes a subject token and, upper-cased, part of the stream names";
    throw invalidOption(
      { component: COMPONENT, option: 'prefix', value: String(prefix), expected: `it ${expected}` },
      `prefix ${JSON.stringify(prefix)} ${expected}`,
    );
  }
  if (options.tls !== undefined && (typeof options.tls !== 'object' || options.tls === null)) {
    const expected =
      'an object of TLS options (e.g. { caFile }), or left out; a tls:// URL requires TLS by itself';
    throw invalidOption(
      { component: COMPONENT, option: 'tls', value: typeof options.tls, expected },
      `tls must be ${expected}`,
    );
  }
  const storage = options.storage ?? 'file';
  if (storage !== 'file' && storage !== 'memory') {
    throw invalidOption({
      component: COMPONENT,
      option: 'storage',
      value: JSON.stringify(storage),
      expected: "use 'file' (durable) or 'memory' (tests)",
    });
  }
  const name = options.name ?? `baton-${prefix}`;
  if (typeof name !== 'string' || name.trim() === '') {
    const expected = "a non-empty string (the connection's name), or left out";
    throw invalidOption(
      { component: COMPONENT, option: 'name', value: JSON.stringify(name), expected },
      `name must be ${expected}`,
    );
  }
  return {
    servers: parsed.urls,
    displayServers: parsed.display,
    credentials: resolveCredentials(options, parsed.credentials),
    tls: options.tls ?? (parsed.tls ? {} : undefined),
    prefix,
    ackWaitMs: positiveInt('ackWaitMs', options.ackWaitMs ?? 30_000, 'e.g. 30000'),
    storage,
    replicas: rangedInt('replicas', options.replicas ?? 1, 1, 5),
    priorityLanes: flag('priorityLanes', options.priorityLanes),
    duplicateWindowMs: positiveInt('duplicateWindowMs', options.duplicateWindowMs ?? 120_000, 'e.g. 120000'),
    maxAckPending: positiveInt('maxAckPending', options.maxAckPending ?? 10_000, 'e.g. 10000'),
    connectTimeoutMs: positiveInt('connectTimeoutMs', options.connectTimeoutMs ?? 5_000, 'e.g. 5000'),
    requestTimeoutMs: positiveInt('requestTimeoutMs', options.requestTimeoutMs ?? 5_000, 'e.g. 5000'),
    leaderWaitMs: positiveInt('leaderWaitMs', options.leaderWaitMs ?? LEADER_WAIT_MS, 'e.g. 20000'),
    name,
    explicitSettings: new Set(STREAM_SETTINGS.filter((setting) => options[setting] !== undefined)),
  };
}

function flag(option: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    const shown = JSON.stringify(value);
    throw invalidOption(
      { component: COMPONENT, option, value: shown, expected: 'use true or false' },
      `${option} must be true or false (got ${shown})`,
    );
  }
  return value;
}

function positiveInt(option: string, value: unknown, example: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw invalidOption({
      component: COMPONENT,
      option,
      value: String(value),
      expected: `use a positive whole number (${example})`,
    });
  }
  return value;
}

function rangedInt(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption({
      component: COMPONENT,
      option,
      value: String(value),
      expected: `use a whole number from ${min} to ${max} (1 for a single server, 3 for a cluster)`,
    });
  }
  return value;
}
