/**
 * The Kafka transport as the worker process knows it (`@baton/core/adapter`'s
 * AdapterRegistration): `kafka://` and `kafkas://` URLs (SASL credentials in the URL's user
 * part), the BATON_KAFKA_* variables, and the topic prefix shown in the `worker ready` line.
 * This module (the package's `/registration` export) imports none of the transport's code (kafkajs):
 * `load()` does (AdapterCode).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '@baton/core';
import {
  AdapterCode,
  switchSetting,
  textSetting,
  wholeNumberSetting,
  type AdapterRegistration,
} from '@baton/core/adapter';
import { resolveKafkaOptions, type KafkaPartitionOwnership } from './options.js';
import type { KafkaCode } from './code.js';

export type { KafkaCode } from './code.js';

/** The package's code, loaded when a process picks this transport. */
export const kafkaCode = new AdapterCode<KafkaCode>(
  'the Kafka transport',
  async () => (await import('./code.js')).kafkaAdapterCode,
);

/** The settings the BATON_KAFKA_* variables give. */
export interface KafkaSettings {
  saslMechanism?: string;
  prefix?: string;
  partitions?: number;
  replicationFactor?: number;
  minInsyncReplicas?: number;
  sessionTimeoutMs?: number;
  partitionOwnership?: string;
  journalRetentionMs?: number;
  ackWaitMs?: number;
  priorityLanes?: boolean;
  /** A path: the file is read when the transport is built. */
  tlsCaFile?: string;
}

const VARIABLES = {
  saslMechanism: {
    ...textSetting(
      'BATON_KAFKA_SASL_MECHANISM',
      "SASL mechanism for the URL's credentials: `plain`, `scram-sha-256` or `scram-sha-512`",
      'sasl.mechanism',
    ),
    default: '`plain`',
  },
  prefix: {
    ...textSetting(
      'BATON_KAFKA_PREFIX',
      'topic and group prefix (`baton.runs`, `baton.journal`, `baton.journal.groups`, `baton.dlq`, group `baton-workers`); one per installation',
      'prefix',
    ),
    default: '`baton`',
  },
  partitions: {
    ...wholeNumberSetting(
      'BATON_KAFKA_PARTITIONS',
      'partitions of the runs, journal and group topics when the worker creates them (at most this many workers share the queue)',
      1,
      'partitions',
    ),
    default: '`12`',
  },
  minInsyncReplicas: {
    ...wholeNumberSetting(
      'BATON_KAFKA_MIN_INSYNC_REPLICAS',
      '`min.insync.replicas` of the topics the worker creates: 2 with a factor of 3 (an acknowledged record is on two brokers); at most the factor',
      1,
      'minInsyncReplicas',
    ),
    default: 'broker default',
  },
  replicationFactor: {
    ...wholeNumberSetting(
      'BATON_KAFKA_REPLICATION_FACTOR',
      'replication factor of the topics the worker creates: 3 on a cluster; creating fails with a clear error when fewer brokers are registered ([docs/production.md](docs/production.md#kafka))',
      1,
      'replicationFactor',
    ),
    default: 'broker default',
  },
  sessionTimeoutMs: {
    ...wholeNumberSetting(
      'BATON_KAFKA_SESSION_TIMEOUT_MS',
      "consumer-group session timeout (`BATON_KAFKA_PARTITION_OWNERSHIP=group` only): how long a dead worker's partitions wait before moving (within the broker's `group.min/max.session.timeout.ms`)",
      3,
      // The heartbeat is derived from it (create below).
      ['sessionTimeoutMs', 'heartbeatIntervalMs'],
    ),
    default: '`10000`',
  },
  partitionOwnership: {
    ...textSetting(
      'BATON_KAFKA_PARTITION_OWNERSHIP',
      "who splits the runs topic's partitions among the workers: `presence` (the store's live workers, by rendezvous hashing; read outside any consumer group, positions committed to the group's offsets; a join or a death stops nobody and a dead worker's partitions move within about a second) or `group` (a kafkajs consumer group)",
      'partitionOwnership',
    ),
    default: '`presence`',
  },
  journalRetentionMs: {
    ...wholeNumberSetting(
      'BATON_KAFKA_JOURNAL_RETENTION_MS',
      "`retention.ms` of the journal and group topics when the worker creates them: Kafka keeps journal records (and group records) this long, as it cannot purge one run's ([docs/retention.md](docs/retention.md))",
      1,
      'journalRetentionMs',
    ),
    default: "the broker's `log.retention.ms`",
  },
  ackWaitMs: {
    ...wholeNumberSetting(
      'BATON_KAFKA_ACK_WAIT_MS',
      'a run message neither acked nor nakked is delivered again after this',
      1,
      'ackWaitMs',
    ),
    default: '`30000`',
  },
  priorityLanes: {
    ...switchSetting(
      'BATON_KAFKA_PRIORITY_LANES',
      "`true`: the worker sets up and reads the run queue's priority lanes (topics `<prefix>.runs.high`, `.low`; groups `<prefix>-workers-high`, `-low`), and a producer may start runs at `high` or `low`; off, such a start is refused with a `ConfigError`. Turn it on for the workers, then the producers, once their principals may use the lanes ([docs/priorities.md](docs/priorities.md))",
      'priorityLanes',
    ),
    default: '`false`',
  },
  tlsCaFile: textSetting(
    'BATON_KAFKA_TLS_CA_FILE',
    'CA certificate to verify the brokers (implies TLS)',
    'tls.ca',
  ),
} as const;

/** The file a variable names; a ConfigError naming the variable, and carrying `option`, when it cannot be read. */
function readVariableFile(option: string, variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const problem = `cannot be read: ${(err as Error).message}`;
    throw new ConfigError(`${variable} names ${path}, which ${problem}`, {
      cause: err,
      option,
      value: path,
      expected: `it ${problem}`,
    });
  }
}

/**
 * How to reach the brokers, from the URL and the settings: the SASL mechanism where the transport
 * reads it (the URL's `sasl` parameter) and the CA file's content, read now.
 */
function adminConnection(
  url: string,
  { saslMechanism, tlsCaFile }: Pick<KafkaSettings, 'saslMechanism' | 'tlsCaFile'>,
): { brokers: string; tls?: { ca: string } } {
  const brokers =
    saslMechanism === undefined
      ? url
      : `${url}${url.includes('?') ? '&' : '?'}sasl=${encodeURIComponent(saslMechanism)}`;
  return {
    brokers,
    ...(tlsCaFile !== undefined && {
      tls: { ca: readVariableFile('tls.ca', VARIABLES.tlsCaFile.name, tlsCaFile) },
    }),
  };
}

/** The prefix the transport uses: the setting, else the URL's `prefix` parameter, else `baton`. */
function prefixOf(url: string, { prefix }: KafkaSettings): string {
  return resolveKafkaOptions({ brokers: url, ...(prefix !== undefined && { prefix }) }).prefix;
}

export const kafkaRegistration: AdapterRegistration<'kafka', 'transport', KafkaSettings> = {
  name: 'kafka',
  kind: 'transport',
  schemes: ['kafka', 'kafkas'],
  variables: VARIABLES,
  urlOption: 'brokers',
  logComponent: 'kafkajs',
  load: () => kafkaCode.load(),
  create: (url, settings, hooks) => {
    const {
      prefix,
      partitions,
      replicationFactor,
      minInsyncReplicas,
      sessionTimeoutMs,
      partitionOwnership,
      ackWaitMs,
      priorityLanes,
      journalRetentionMs,
    } = settings;
    return kafkaCode.get().kafkaTransport({
      // The brokers with the SASL mechanism, and the CA.
      ...adminConnection(url, settings),
      ...(prefix !== undefined && { prefix }),
      ...(partitions !== undefined && { partitions }),
      ...(replicationFactor !== undefined && { replicationFactor }),
      ...(minInsyncReplicas !== undefined && { minInsyncReplicas }),
      // A heartbeat a third of the session (at most 1 s), so a short session still sees three.
      ...(sessionTimeoutMs !== undefined && {
        sessionTimeoutMs,
        heartbeatIntervalMs: Math.max(1, Math.min(1_000, Math.floor(sessionTimeoutMs / 3))),
      }),
      // Checked by the transport's options (ConfigError naming the allowed values).
      ...(partitionOwnership !== undefined && {
        partitionOwnership: partitionOwnership as KafkaPartitionOwnership,
      }),
      ...(ackWaitMs !== undefined && { ackWaitMs }),
      ...(priorityLanes !== undefined && { priorityLanes }),
      ...(journalRetentionMs !== undefined && { journalRetentionMs }),
      ...(hooks.log !== undefined && { log: hooks.log }),
    });
  },
  // The prefix as the transport resolves it: unset is the default installation's (`baton`).
  installation: {
    list: async (url, settings) =>
      (await kafkaCode.load()).listKafkaTopics({
        ...adminConnection(url, settings),
        prefix: prefixOf(url, settings),
      }),
    drop: async (url, settings) =>
      (await kafkaCode.load()).deleteKafkaTopics({
        ...adminConnection(url, settings),
        prefix: prefixOf(url, settings),
      }),
  },
  isolation: { settings: (id) => ({ prefix: id }) },
  describeNamespace: (url, settings) => ({ transportPrefix: prefixOf(url, settings) }),
};
