/**
 * Options of {@link kafkaTransport}, resolved once into a complete {@link ResolvedKafkaOptions} so
 * a typo fails when the transport is created, never on the first failover.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { type ConfigError } from '@baton/core';
import { maskUrlSecret, invalidOption, type ConfigErrorFields } from '@baton/core/adapter';

export const DEFAULT_KAFKA_BROKERS = 'kafka://127.0.0.1:9092';
export const DEFAULT_KAFKA_PREFIX = 'baton';

export type KafkaSaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
const SASL_MECHANISMS: readonly KafkaSaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512'];

export interface KafkaSaslOptions {
  mechanism: KafkaSaslMechanism;
  username: string;
  /** Never appears in messages or logs. */
  password: string;
}

/** Options of {@link kafkaTransport}. */
export interface KafkaTransportOptions {
  /**
   * Bootstrap brokers: `kafka://host:9092`, several hosts separated by commas
   * (`kafka://a:9092,b:9092`), `kafkas://…` for TLS, bare `host:port`, or an array of those.
   * A URL may carry SASL credentials (`kafka://user:password@host:9092`) and query parameters
   * `sasl` (mechanism), `tls` (`true`), `prefix`, `partitions`, `clientId`; explicit options win.
   * @defaultValue 'kafka://127.0.0.1:9092'
   */
  brokers?: string | string[];
  /**
   * Names everything the transport creates: topics `<prefix>.runs`, `<prefix>.journal`,
   * `<prefix>.journal.groups`, `<prefix>.dlq` and the consumer group `<prefix>-workers`. Transports with different prefixes
   * share nothing.
   * @defaultValue 'baton'
   */
  prefix?: string;
  /**
   * Partitions of the runs, journal and group topics when the transport creates them. Existing
   * topics keep theirs. It bounds how many workers share the run queue: a group member without a
   * partition idles. Never add partitions to the journal or group topic later: a run's records
   * (a group log's) are found by the partition its id (its name) hashes to.
   * @defaultValue 12
   */
  partitions?: number;
  /**
   * Replication factor of created topics; -1 takes the broker's `default.replication.factor`.
   * Use 3 on a cluster (with {@link minInsyncReplicas} 2): an acknowledged record is then on at
   * least two brokers and survives the loss of any one. Creating topics fails with a clear error
   * when the cluster has fewer brokers than this. Existing topics keep theirs.
   * @defaultValue -1
   */
  replicationFactor?: number;
  /**
   * `min.insync.replicas` of created topics: how many replicas must hold a record before the
   * producer's `acks=all` is answered. At most {@link replicationFactor}; with a factor of 3, 2
   * lets one broker be down while writes go on. Existing topics keep theirs.
   * @defaultValue the broker's `min.insync.replicas` (1 unless changed)
   */
  minInsyncReplicas?: number;
  /** Client id sent to the brokers (appears in their logs and quotas). @defaultValue 'baton' */
  clientId?: string;
  /**
   * SASL authentication. A URL's `user:password@` sets it with mechanism `plain` (or the URL's
   * `sasl` parameter).
   * @defaultValue none
   */
  sasl?: KafkaSaslOptions;
  /**
   * TLS: `true` for Node's defaults, or Node TLS options (`ca`, `cert`, `key`,
   * `rejectUnauthorized`, `servername`). A `kafkas://` URL or `?tls=true` means `true`.
   * @defaultValue false
   */
  tls?: boolean | TlsConnectionOptions;
  /**
   * Consumer group session timeout: how long the group coordinator waits for a silent member
   * before giving its partitions to the others. Must lie within the broker's
   * `group.min.session.timeout.ms` (default 6000) and `group.max.session.timeout.ms`. It bounds
   * how long *new* run messages on a dead worker's partitions wait; runs the dead worker held are
   * resumed through the store's dead-worker scan, which does not wait for it.
   * @defaultValue 10000
   */
  sessionTimeoutMs?: number;
  /** Consumer heartbeat interval; at most a third of the session timeout. @defaultValue 1000 */
  heartbeatIntervalMs?: number;
  /**
   * Who decides which worker reads which partition of the runs topic:
   * - `presence`: the store's presence, once a worker hands it over (`runQueue.share`; Redis and
   *   Postgres stores): each partition goes to one of the live workers by rendezvous hashing, read
   *   outside any consumer group, its position committed to the group's offsets. A join or a death
   *   moves only the partitions that change hands, within about two `ownershipRefreshMs` of the
   *   store seeing it, and stops nobody else. Without a membership (a producer, a store without presence) the
   *   transport falls back to `group`.
   * - `group`: a kafkajs consumer group; every join and every death stops the whole group for a
   *   rebalance, and a dead member's partitions wait for `sessionTimeoutMs`.
   * The whole fleet must use one mode: a group member's presence makes the others' commits fail.
   * @defaultValue 'presence'
   */
  partitionOwnership?: KafkaPartitionOwnership;
  /**
   * Sets up and reads the run queue's priority lanes, the topics `<prefix>.runs.high` and
   * `<prefix>.runs.low` with the groups `<prefix>-workers-high` and `-low` (docs/priorities.md).
   * Off, the run queue is the runs topic alone, exactly as before priorities, and a start at `high`
   * or `low` is refused with a ConfigError. Opt-in because a principal restricted by ACLs must be
   * granted the lanes first. Turn it on for the workers, then the producers.
   * @defaultValue false
   */
  priorityLanes?: boolean;
  /**
   * How often, with `partitionOwnership: 'presence'`, a worker reads the fleet's member list
   * and moves partitions accordingly. One worker at a time lists the live workers each period and
   * publishes the list in the store; the others read one small record (the list itself only when
   * it changed), so the store's cost per period grows with the fleet, not with its square.
   * @defaultValue 250
   */
  ownershipRefreshMs?: number;
  /**
   * How long a fetched run message may stay neither acked nor nakked before it is delivered again
   * (as JetStream's ack wait does). Longer than the time a worker needs to take a run's lease.
   * @defaultValue 30000
   */
  ackWaitMs?: number;
  /**
   * Run messages buffered in the process before the transport pauses its partitions; they resume
   * when the buffer has drained to half.
   * @defaultValue 256
   */
  maxBufferedMessages?: number;
  /**
   * Largest record the transport sends; larger data fails with PayloadTooLargeError before
   * anything is sent. Keep it at or below the broker's `message.max.bytes` and the topics'
   * `max.message.bytes`.
   * @defaultValue 1000000
   */
  maxMessageBytes?: number;
  /**
   * How long a msgId is remembered to drop a second run message with the same id (consumer
   * side, per process). The store's idempotency keys are the guarantee; this only saves work.
   * @defaultValue 120000
   */
  dedupWindowMs?: number;
  /** TCP connect timeout per broker. @defaultValue 3000 */
  connectionTimeoutMs?: number;
  /** Timeout of one request to a broker. @defaultValue 10000 */
  requestTimeoutMs?: number;
  /**
   * `retention.ms` of the journal topic and the group topic when the transport creates them: how
   * long the bus keeps a run's journal records (and the group records of group commit). Kafka
   * cannot delete one run's records, so this is the journal's retention (docs/retention.md); keep it above the longest a run may live, since a resume reads
   * the journal after its checkpoint. Existing topics keep their config (`kafka-configs --alter`).
   * @defaultValue the broker's `log.retention.ms` (7 days unless changed)
   */
  journalRetentionMs?: number;
}

/** See {@link KafkaTransportOptions.partitionOwnership}. */
export type KafkaPartitionOwnership = 'presence' | 'group';
export const KAFKA_PARTITION_OWNERSHIPS: readonly KafkaPartitionOwnership[] = ['presence', 'group'];

export interface ResolvedKafkaOptions {
  brokers: string[];
  /** The bootstrap list as shown in messages: no secrets. */
  displayBrokers: string;
  prefix: string;
  partitions: number;
  replicationFactor: number;
  /** undefined: the broker's default. */
  minInsyncReplicas: number | undefined;
  clientId: string;
  sasl: KafkaSaslOptions | undefined;
  tls: boolean | TlsConnectionOptions;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  partitionOwnership: KafkaPartitionOwnership;
  priorityLanes: boolean;
  ownershipRefreshMs: number;
  ackWaitMs: number;
  maxBufferedMessages: number;
  maxMessageBytes: number;
  dedupWindowMs: number;
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
  /** undefined: the broker's default. */
  journalRetentionMs: number | undefined;
}

const PREFIX_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,99}$/;
/** What the transport's ConfigErrors name as their component. */
const COMPONENT = 'kafka transport';

/** The ConfigError for one option: `<component>: <message>`, with the option's fields. */
function refuse(
  fields: Omit<ConfigErrorFields, 'component'> & { option: string; value: string; expected: string },
  message: string,
): ConfigError {
  return invalidOption({ component: COMPONENT, ...fields }, message);
}
const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[a-zA-Z0-9._-]+):(\d{1,5})$/;

interface ParsedUrl {
  brokers: string[];
  tls: boolean;
  sasl?: { username: string; password: string };
  params: URLSearchParams;
}

/** Splits `kafka://[user:password@]h1:p1,h2:p2[?query]` (or a bare `host:port`) into parts. */
function parseBrokerUrl(raw: string): ParsedUrl {
  const shown = maskUrlSecret(raw.trim());
  const bad = (why: string): ConfigError => {
    const expected = `${why}; expected kafka://host:9092, kafkas://host:9093 or host:port`;
    return refuse(
      { option: 'brokers', value: shown, expected: `it ${expected}` },
      `broker '${shown}' ${expected}`,
    );
  };
  let rest = raw.trim();
  let tls = false;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (name !== 'kafka' && name !== 'kafkas') throw bad(`has scheme ${name}://`);
    tls = name === 'kafkas';
    rest = rest.slice(scheme[0].length);
  }
  let params = new URLSearchParams();
  const query = rest.indexOf('?');
  if (query >= 0) {
    params = new URLSearchParams(rest.slice(query + 1));
    rest = rest.slice(0, query);
  }
  rest = rest.replace(/\/+$/, '');
  let sasl: ParsedUrl['sasl'];
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(':');
    if (colon < 0) throw bad('has a user without a password');
    sasl = {
      username: decodeURIComponent(userinfo.slice(0, colon)),
      password: decodeURIComponent(userinfo.slice(colon + 1)),
    };
  }
  const brokers = rest.split(',').map((h) => h.trim());
  for (const broker of brokers) {
    const match = HOST_PORT.exec(broker);
    if (!match || Number(match[2]) < 1 || Number(match[2]) > 65_535) {
      throw bad(broker === '' ? 'names no host' : `has '${broker}', which is not host:port`);
    }
  }
  return { brokers, tls, ...(sasl && { sasl }), params };
}

function positiveInt(name: string, value: number | undefined, fallback: number, max = 2 ** 31 - 1): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1 || v > max) {
    const expected = `it must be an integer from 1 to ${max}`;
    throw refuse(
      { option: name, value: String(v), expected },
      `${name} must be an integer from 1 to ${max}, got ${String(v)}`,
    );
  }
  return v;
}

function intParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) {
    throw refuse(
      {
        option: 'brokers',
        value: `${name}=${raw}`,
        expected: `its parameter ${name}=${raw} is not an integer`,
      },
      `URL parameter ${name}=${raw} is not an integer`,
    );
  }
  return n;
}

function saslMechanism(raw: string | null | undefined): KafkaSaslMechanism {
  const value = (raw ?? 'plain').toLowerCase();
  if (!(SASL_MECHANISMS as readonly string[]).includes(value)) {
    const expected = `use one of ${SASL_MECHANISMS.join(', ')}`;
    throw refuse(
      { option: 'sasl.mechanism', value, expected: `it is not supported; ${expected}` },
      `SASL mechanism '${value}' is not supported; ${expected}`,
    );
  }
  return value as KafkaSaslMechanism;
}

export function resolveKafkaOptions(options: KafkaTransportOptions = {}): ResolvedKafkaOptions {
  const inputs = options.brokers ?? DEFAULT_KAFKA_BROKERS;
  const list = (Array.isArray(inputs) ? inputs : [inputs]).filter((s) => s.trim() !== '');
  const shownBrokers = list.map((broker) => maskUrlSecret(broker.trim())).join(',');
  if (list.length === 0) {
    throw refuse(
      { option: 'brokers', value: '', expected: 'name at least one host:port' },
      'brokers is empty; name at least one host:port',
    );
  }
  const parsed = list.map(parseBrokerUrl);
  const params = new URLSearchParams();
  for (const p of parsed) for (const [k, v] of p.params) params.set(k, v);
  const known = new Set(['sasl', 'tls', 'prefix', 'partitions', 'clientId']);
  for (const key of params.keys()) {
    if (!known.has(key)) {
      const expected = `unknown URL parameter '${key}'; known: ${[...known].join(', ')}`;
      throw refuse({ option: 'brokers', value: shownBrokers, expected: `it has an ${expected}` }, expected);
    }
  }
  const urlSasl = parsed.find((p) => p.sasl)?.sasl;
  let sasl: KafkaSaslOptions | undefined = options.sasl;
  if (sasl === undefined && urlSasl !== undefined) {
    sasl = { mechanism: saslMechanism(params.get('sasl')), ...urlSasl };
  } else if (sasl !== undefined) {
    sasl = { ...sasl, mechanism: saslMechanism(sasl.mechanism) };
    if (!sasl.username || typeof sasl.password !== 'string') {
      throw refuse(
        { option: 'sasl', value: '***', expected: 'it needs a username and a password' },
        'sasl needs a username and a password',
      );
    }
  } else if (params.get('sasl') !== null) {
    const expected = 'use kafka://user:password@host:9092?sasl=…';
    throw refuse(
      {
        option: 'brokers',
        value: shownBrokers,
        expected: `it names a SASL mechanism but no credentials; ${expected}`,
      },
      `the URL names a SASL mechanism but no credentials; ${expected}`,
    );
  }
  const tlsParam = params.get('tls');
  if (tlsParam !== null && tlsParam !== 'true' && tlsParam !== 'false') {
    throw refuse(
      {
        option: 'brokers',
        value: shownBrokers,
        expected: `its parameter tls=${tlsParam} must be true or false`,
      },
      `URL parameter tls=${tlsParam} must be true or false`,
    );
  }
  const tls = options.tls ?? (parsed.some((p) => p.tls) || tlsParam === 'true');

  const prefix = options.prefix ?? params.get('prefix') ?? DEFAULT_KAFKA_PREFIX;
  if (!PREFIX_PATTERN.test(prefix)) {
    const expected = "must be 1-100 letters, digits, '_' or '-', starting with a letter or digit";
    // A prefix from the URL's parameter is the URL's fault.
    const option = options.prefix === undefined ? 'brokers' : 'prefix';
    throw refuse(
      { option, value: option === 'prefix' ? prefix : shownBrokers, expected: `it ${expected}` },
      `prefix '${prefix}' ${expected}`,
    );
  }
  const sessionTimeoutMs = positiveInt('sessionTimeoutMs', options.sessionTimeoutMs, 10_000);
  const heartbeatIntervalMs = positiveInt('heartbeatIntervalMs', options.heartbeatIntervalMs, 1_000);
  if (heartbeatIntervalMs * 3 > sessionTimeoutMs) {
    const expected = `must be at most a third of sessionTimeoutMs (${sessionTimeoutMs})`;
    throw refuse(
      {
        option: 'heartbeatIntervalMs',
        value: String(heartbeatIntervalMs),
        expected: `it ${expected}`,
        related: ['sessionTimeoutMs'],
      },
      `heartbeatIntervalMs (${heartbeatIntervalMs}) ${expected}`,
    );
  }
  const partitionOwnership = options.partitionOwnership ?? 'presence';
  if (!KAFKA_PARTITION_OWNERSHIPS.includes(partitionOwnership)) {
    throw refuse(
      {
        option: 'partitionOwnership',
        value: String(partitionOwnership),
        expected: 'it must be presence or group',
      },
      `partitionOwnership '${String(partitionOwnership)}' must be presence or group`,
    );
  }
  const priorityLanes = options.priorityLanes ?? false;
  if (typeof priorityLanes !== 'boolean') {
    const shown = JSON.stringify(priorityLanes);
    throw refuse(
      { option: 'priorityLanes', value: shown, expected: 'it must be true or false' },
      `priorityLanes must be true or false (got ${shown})`,
    );
  }
  const replicationFactor = options.replicationFactor ?? -1;
  if (!Number.isInteger(replicationFactor) || (replicationFactor < 1 && replicationFactor !== -1)) {
    const expected = "it must be a positive integer or -1 (the broker's default)";
    throw refuse(
      { option: 'replicationFactor', value: String(replicationFactor), expected },
      `replicationFactor must be a positive integer or -1 (the broker's default), got ${String(replicationFactor)}`,
    );
  }
  const minInsyncReplicas =
    options.minInsyncReplicas === undefined
      ? undefined
      : positiveInt('minInsyncReplicas', options.minInsyncReplicas, 1, 100);
  if (minInsyncReplicas !== undefined && replicationFactor !== -1 && minInsyncReplicas > replicationFactor) {
    const expected = `must not exceed replicationFactor (${replicationFactor}): no write could ever be acknowledged`;
    throw refuse(
      {
        option: 'minInsyncReplicas',
        value: String(minInsyncReplicas),
        expected: `it ${expected}`,
        related: ['replicationFactor'],
      },
      `minInsyncReplicas (${minInsyncReplicas}) ${expected}`,
    );
  }
  const clientId = options.clientId ?? params.get('clientId') ?? 'baton';
  const brokers = parsed.flatMap((p) => p.brokers);
  return {
    brokers,
    displayBrokers: brokers.join(','),
    prefix,
    partitions: positiveInt('partitions', options.partitions ?? intParam(params, 'partitions'), 12, 10_000),
    replicationFactor,
    minInsyncReplicas,
    clientId,
    sasl,
    tls,
    sessionTimeoutMs,
    heartbeatIntervalMs,
    partitionOwnership,
    priorityLanes,
    ownershipRefreshMs: positiveInt('ownershipRefreshMs', options.ownershipRefreshMs, 250),
    ackWaitMs: positiveInt('ackWaitMs', options.ackWaitMs, 30_000),
    maxBufferedMessages: positiveInt('maxBufferedMessages', options.maxBufferedMessages, 256),
    maxMessageBytes: positiveInt('maxMessageBytes', options.maxMessageBytes, 1_000_000),
    dedupWindowMs: positiveInt('dedupWindowMs', options.dedupWindowMs, 120_000),
    connectionTimeoutMs: positiveInt('connectionTimeoutMs', options.connectionTimeoutMs, 3_000),
    requestTimeoutMs: positiveInt('requestTimeoutMs', options.requestTimeoutMs, 10_000),
    journalRetentionMs:
      options.journalRetentionMs === undefined
        ? undefined
        : positiveInt('journalRetentionMs', options.journalRetentionMs, 0, Number.MAX_SAFE_INTEGER),
  };
}
