/**
 * Every BATON_* variable a Baton process reads (the worker, the producer, the `baton` CLI, the
 * console), declared once. The worker's configuration (`ENV`), the operator tools' subset
 * (`OPERATOR_ENV`), the producer's and the console's names, the tables of variables in
 * docs/configuration.md (`npm run docs:variables`) and the CLI's connection flags with their `--help` lines are derived
 * from {@link VARIABLES}; a variable added here shows up in each of them, and one read anywhere
 * else is a variable nobody documents.
 *
 * The adapters' variables come from their registrations (registry.ts), the payload protection
 * names from `@baton/core`'s PAYLOAD_ENV (core reads them itself and cannot import this package).
 * Test and benchmark variables (BATON_TEST_*, BATON_BENCH_*) are not here: no shipped process reads them.
 */
import type { AdapterRegistration, AdapterVariable } from '@baton/core/adapter';
import { PAYLOAD_ENV } from '@baton/core/runtime';
import { ADAPTERS, type RegisteredAdapter } from './registry.js';

/**
 * Who reads a variable: the worker process, the producer, the operator tools (the `baton` CLI
 * and the console it serves, which connect to the fleet as a client does), or the console alone.
 */
export type VariableReader = 'worker' | 'producer' | 'operator' | 'console';

/** A flag of the `baton` CLI that overrides a variable. */
export interface VariableFlag {
  /** `--transport-url`; commander gives its value under the camel-cased name (`transportUrl`). */
  readonly name: string;
  /** The value's placeholder in `--help` (`url`); none for a switch (`--read-only`). */
  readonly argument?: string;
  /** Its `--help` line, which adds the variable's name: short, plain text. */
  readonly help: string;
  /** The flag may be given again for each value of a comma-separated variable (`--metrics-url`). */
  readonly repeatable?: boolean;
}

/** One BATON_* variable, as operators read about it. */
export interface BatonVariable {
  readonly name: string;
  readonly readBy: readonly VariableReader[];
  /** One line, Markdown (docs/configuration.md's table shows it as it is; links written from the repository root). */
  readonly description: string;
  /** The default as shown to operators (Markdown): `required`, `` `100` ``, `lease / 3`, `none`. */
  readonly default: string;
  /** Its value is a secret (a key, a password, a token): never shown in messages, logs or help. */
  readonly secret: boolean;
  readonly flag?: VariableFlag;
  /** What a reader's own table says instead of `description`, when it reads the variable its own way. */
  readonly notes?: Partial<Record<VariableReader, string>>;
}

/** A declared row; `secret` and `default` may be left out (not a secret; no default). */
type Declared = Omit<BatonVariable, 'secret' | 'default'> & {
  readonly secret?: boolean;
  readonly default?: string;
};

const WORKER = ['worker'] as const;
/** The bus: every process that sends or reads runs. */
const BUS = ['worker', 'producer', 'operator'] as const;
/** The store and how values are kept in it: the worker and the operator tools. */
const FLEET = ['worker', 'operator'] as const;
/** Sealing values (payload protection): everyone who writes or reads them, the producer included. */
const SEALING = ['worker', 'producer', 'operator'] as const;
const PRODUCER = ['producer'] as const;
const CONSOLE = ['console'] as const;

/** The worker process's own variables (the adapters' follow them), keyed as in `ENV`. */
const WORKER_VARIABLES = {
  transportUrl: {
    name: 'BATON_TRANSPORT_URL',
    readBy: BUS,
    default: 'required',
    description:
      "the bus: `nats://[user:pass@]host:4222` (several comma-separated), `tls://` for TLS; or `kafka://[user:pass@]host:9092[,host:9092]` (SASL from the user part), `kafkas://` for TLS; or `redis://[user:pass@]host:6379[/db]`, `rediss://` for TLS, `redis+sentinel://host:26379[,host:port…]/<master name>` through Redis Sentinel: the Redis transport (BullMQ queue + Redis Streams, [libs/transport-redis](libs/transport-redis/README.md)), which may be the store's own server ([docs/redis-only.md](docs/redis-only.md))",
    flag: { name: '--transport-url', argument: 'url', help: 'the bus: nats://…, kafka://… or redis://…' },
    notes: {
      producer:
        "the bus, as for the worker; the worker's `BATON_NATS_*`, `BATON_KAFKA_*` and `BATON_REDIS_BUS_*` variables apply too",
    },
  },
  storeUrl: {
    name: 'BATON_STORE_URL',
    readBy: FLEET,
    default: 'required',
    description:
      'the store: `redis://[user:pass@]host:6379[/db]`, `rediss://` for TLS, `redis+sentinel://host:26379[,host:port…]/<master name>` through Redis Sentinel, `postgres://user@host:5432/db`',
    flag: { name: '--store-url', argument: 'url', help: 'the store: redis://… or postgres://…' },
  },
  workflows: {
    name: 'BATON_WORKFLOWS',
    readBy: WORKER,
    default: 'required',
    description:
      'comma-separated modules exporting workflow definitions; paths starting with `.` or `/` resolve from the cwd',
  },
  concurrency: {
    name: 'BATON_CONCURRENCY',
    readBy: WORKER,
    default: '`100`',
    description: 'runs executed at once by this process',
  },
  leaseMs: {
    name: 'BATON_LEASE_MS',
    readBy: WORKER,
    default: '`5000`',
    description: 'lease length; the backstop when a node vanishes without its connections dropping',
  },
  heartbeatMs: {
    name: 'BATON_HEARTBEAT_MS',
    readBy: WORKER,
    default: 'lease / 3',
    description: 'batched lease renewal interval',
  },
  reapIntervalMs: {
    name: 'BATON_REAP_INTERVAL_MS',
    readBy: WORKER,
    default: 'min(1000, lease / 2)',
    description:
      'expired-lease reaper and timer scan interval; with presence (Redis, Postgres) the fleet takes the scan in turns, one worker per period',
  },
  deadWorkerScanMs: {
    name: 'BATON_DEAD_WORKER_SCAN_MS',
    readBy: WORKER,
    default: '`150`',
    description:
      'how often the fleet looks for workers whose store connection dropped (0 = off); one worker per period scans, in turns ([docs/performance.md](docs/performance.md#fleet-at-scale-2026-11-25))',
  },
  missingVersionGraceMs: {
    name: 'BATON_MISSING_VERSION_GRACE_MS',
    readBy: WORKER,
    default: '`60000`',
    description:
      'a start for a workflow version no live worker registers is dead-lettered after this; redriven when one starts (docs/versioning.md)',
  },
  retentionMs: {
    name: 'BATON_RETENTION_MS',
    readBy: WORKER,
    default: '`0` (off: keep forever)',
    description:
      'time to live of finished runs: completed, failed and cancelled runs finished longer ago lose their store data and journal, in batches, till done ([docs/retention.md](docs/retention.md)); unfinished runs are never touched',
  },
  retentionTombstoneMs: {
    name: 'BATON_RETENTION_TOMBSTONE_MS',
    readBy: WORKER,
    default: '`BATON_RETENTION_MS`',
    description:
      'life of the tombstone a swept run leaves: `client.result()` of that run fails at once with `RunDeletedError` ([docs/retention.md](docs/retention.md))',
  },
  groupLogTrimMs: {
    name: 'BATON_GROUP_LOG_TRIM_MS',
    readBy: WORKER,
    default: '`60000`',
    description:
      'with group commit, how often the fleet (one worker per period, in turns) removes group records that no kept run names any more, i.e. records whose runs were all deleted ([docs/retention.md](docs/retention.md#group-commit-group-logs)); 0 = off',
  },
  scheduleScanMs: {
    name: 'BATON_SCHEDULE_SCAN_MS',
    readBy: WORKER,
    default: '`1000`',
    description:
      'how often the fleet (one worker per period, in turns) starts the runs of due schedules; 0 = this worker fires none ([docs/schedules.md](docs/schedules.md))',
  },
  checkpointEvery: {
    name: 'BATON_CHECKPOINT_EVERY',
    readBy: WORKER,
    default: '`100`',
    description: 'checkpoint after this many journal entries',
  },
  historySoftEntries: {
    name: 'BATON_HISTORY_SOFT_ENTRIES',
    readBy: ['worker', 'console'],
    default: '`10000`',
    description:
      'a run\'s history at this many entries is past its soft limit: the worker warns once per run, the console flags the run and `ctx.historyInfo().suggested` turns true; `0` = none ([docs/continue-as-new.md](docs/continue-as-new.md), "Bounded histories")',
  },
  historySoftBytes: {
    name: 'BATON_HISTORY_SOFT_BYTES',
    readBy: ['worker', 'console'],
    default: '`10485760` (10 MiB)',
    description:
      "the soft limit on a run's history in encoded bytes, as `BATON_HISTORY_SOFT_ENTRIES`; `0` = none",
  },
  historyMaxEntries: {
    name: 'BATON_HISTORY_MAX_ENTRIES',
    readBy: WORKER,
    default: '`50000`',
    description:
      "a run's history at this many entries is at its hard limit: the run fails with `BATON_HISTORY_LIMIT` at its next entry (its end still lands, so a run may still continue as new); `0` = none",
  },
  historyMaxBytes: {
    name: 'BATON_HISTORY_MAX_BYTES',
    readBy: WORKER,
    default: '`52428800` (50 MiB)',
    description:
      "the hard limit on a run's history in encoded bytes, as `BATON_HISTORY_MAX_ENTRIES`; `0` = none",
  },
  memoryBudgetMib: {
    name: 'BATON_MEMORY_BUDGET_MIB',
    readBy: WORKER,
    default:
      "a quarter of the smaller of the container's memory limit and V8's heap limit (128 in the chart's 512 MiB container)",
    description:
      'memory budget for in-flight runs, in MiB of live heap: the worker claims a new run only while the heap projected for its runs in flight (the idle heap plus a per-run size it measures at full GCs) leaves room for it, and holds back from the moment none fits until runs ending bring the projection to `BATON_MEMORY_RESUME_MIB`; with nothing in flight it still takes one run at a time; runs already claimed are never paused; `0` = off (logged, `baton_memory_holding`, `baton_memory_hold_backs_total`; docs/performance.md, "Memory budget")',
  },
  memoryResumeMib: {
    name: 'BATON_MEMORY_RESUME_MIB',
    readBy: WORKER,
    default: '80% of the budget',
    description:
      'the resume mark of the memory budget: below `BATON_MEMORY_BUDGET_MIB`, and set only with it',
  },
  pipelineSteps: {
    name: 'BATON_PIPELINE_STEPS',
    readBy: WORKER,
    default: '`false`',
    description:
      "`true`: pipelined steps (the `pipelineSteps` option below); a run's idempotent steps go on before their journal entries are durable",
  },
  journal: {
    name: 'BATON_JOURNAL',
    readBy: WORKER,
    default: '`group` with a Redis store (any bus) or a Kafka bus (any store), else `per-run`',
    description:
      "`group`: group commit across runs (the `journal` option below): a worker journals the steps of many runs in one record and each run's pointer in the store; with the default, new runs are grouped once every live worker reads group journals ([docs/versioning.md](docs/versioning.md#upgrading-to-group-commit-the-journals-format-not-a-workflows)); `per-run`: a journal per run (the default on NATS with Postgres, where a pointer call per flush costs one run more latency than it saves; on Kafka a per-run journal costs a bus append per step and a checkpoint per run, more than group records: docs/performance.md). Either mode resumes runs of both kinds",
  },
  maxMessageBytes: {
    name: 'BATON_MAX_MESSAGE_BYTES',
    readBy: WORKER,
    default: '`1048576`',
    description: 'larger run messages are dead-lettered',
  },
  maxDeliveries: {
    name: 'BATON_MAX_DELIVERIES',
    readBy: WORKER,
    default: '`20`',
    description: 'a message failing this often is dead-lettered',
  },
  maxResumeFailures: {
    name: 'BATON_MAX_RESUME_FAILURES',
    readBy: WORKER,
    default: '`5`',
    description:
      'a run whose resume throws on this many claims in a row is failed with `ResumeFailedError` and the last error ([docs/operations.md](docs/operations.md)); a lost lease or an unavailable store or bus does not count',
  },
  resumeBackoffMs: {
    name: 'BATON_RESUME_BACKOFF_MS',
    readBy: WORKER,
    default: '`1000`',
    description:
      'after the n-th failed resume in a row the run waits `min(cap, this * 2^(n-1))` before the next claim',
  },
  resumeBackoffMaxMs: {
    name: 'BATON_RESUME_BACKOFF_MAX_MS',
    readBy: WORKER,
    default: '`60000`',
    description: 'the cap of that wait; at least `BATON_RESUME_BACKOFF_MS`',
  },
  drainTimeoutMs: {
    name: 'BATON_DRAIN_TIMEOUT_MS',
    readBy: WORKER,
    default: '`10000`',
    description:
      'on SIGTERM, how long in-flight activities may finish before they are aborted and handed off',
  },
  departedRetentionMs: {
    name: 'BATON_DEPARTED_RETENTION_MS',
    readBy: WORKER,
    default: '`3600000` (one hour)',
    description:
      "how long the store keeps a worker that left (`baton workers --all`, the console's workers page): last seen, how it ended (handed off or expired), the runs it held (at most 100); 0 keeps none ([docs/operations.md](docs/operations.md#departed-workers))",
  },
  inProcessWaitMs: {
    name: 'BATON_IN_PROCESS_WAIT_MS',
    readBy: WORKER,
    default: '`1000`',
    description: 'sleeps shorter than this are awaited in process',
  },
  fetchWaitMs: {
    name: 'BATON_FETCH_WAIT_MS',
    readBy: WORKER,
    default: '`1000`',
    description: 'how long one fetch from the run queue waits',
  },
  shutdownTimeoutMs: {
    name: 'BATON_SHUTDOWN_TIMEOUT_MS',
    readBy: WORKER,
    default: 'drain + 15000',
    description: 'on SIGTERM, the process exits after this even if the hand-off hangs',
  },
  workerId: {
    name: 'BATON_WORKER_ID',
    readBy: WORKER,
    default: '`<host>-<pid>-<random>`',
    description: 'identity in leases, presence and logs; must be unique per live process',
  },
  logLevel: {
    name: 'BATON_LOG_LEVEL',
    readBy: ['worker', 'producer'],
    default: '`info`',
    description: '`trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`',
    notes: { producer: 'as for the worker; `debug` logs every run enqueued' },
  },
  logFormat: {
    name: 'BATON_LOG_FORMAT',
    readBy: WORKER,
    default: '`pretty` when stdout is a terminal, else `json`',
    description:
      '`json`: one JSON object a line (pino), for log collectors; `pretty`: one readable line an event (time, level, message, `runId`, `workflow`, step, then the other fields), in colour on a terminal unless `NO_COLOR` is set',
  },
  httpPort: {
    name: 'BATON_HTTP_PORT',
    readBy: WORKER,
    default: '`8080`',
    description:
      'port of `/healthz`, `/readyz` and `/metrics` ([docs/operations.md](docs/operations.md)); `0` picks a free port, logged as `httpPort` in `worker ready`',
  },
  httpHost: {
    name: 'BATON_HTTP_HOST',
    readBy: WORKER,
    default: '`0.0.0.0`',
    description: 'address the HTTP server listens on',
  },
  livenessStallMs: {
    name: 'BATON_LIVENESS_STALL_MS',
    readBy: WORKER,
    default: '`30000`',
    description:
      '`/healthz` fails when the event loop was blocked, or no lease renewal round finished, for this long',
  },
  encryptionKeys: {
    name: PAYLOAD_ENV.encryptionKeys,
    readBy: SEALING,
    default: 'none',
    description:
      '`id:base64key` entries, comma-separated: AES-256-GCM keys (32 bytes each) that encrypt journal records, checkpoint entries, and every run input, result, error and signal payload on the bus and in the store; every key still needed to read. Turns on the hash chain ([docs/integrity.md](docs/integrity.md)). Give producers and clients the same keys',
    secret: true,
    notes: {
      producer:
        "the workers' keys: each input is sealed before it is sent; required by a fleet whose workers require encryption ([docs/integrity.md](docs/integrity.md#values-outside-the-journal))",
    },
  },
  encryptionKeyId: {
    name: PAYLOAD_ENV.encryptionKeyId,
    readBy: SEALING,
    default: 'the first key listed',
    description: 'the key that encrypts new data (rotation: add the new key, then make it active)',
    notes: { producer: 'the key that seals each input, as for the worker' },
  },
  signingKeys: {
    name: PAYLOAD_ENV.signingKeys,
    readBy: SEALING,
    default: 'none',
    description:
      '`id:base64key` entries: HMAC-SHA256 keys (32 bytes or more) that sign every checkpoint; turns on the hash chain',
    secret: true,
  },
  signingKeyId: {
    name: PAYLOAD_ENV.signingKeyId,
    readBy: SEALING,
    default: 'the first key listed',
    description: 'the key that signs new checkpoints',
  },
  compressThresholdBytes: {
    name: PAYLOAD_ENV.compressThresholdBytes,
    readBy: SEALING,
    default: '`1024` with encryption, else off',
    description: 'zlib-compress payloads of at least this many bytes (`0` = all), or `off`',
  },
  allowPlaintext: {
    name: PAYLOAD_ENV.allowPlaintext,
    readBy: SEALING,
    default: '`false`',
    description:
      'while turning protection on or upgrading producers: also read records and checkpoints written without it, and take start and signal messages whose values came in the clear (otherwise dead-lettered `unprotected-payload`)',
  },
  payloadRefThresholdBytes: {
    name: 'BATON_PAYLOAD_REF_THRESHOLD_BYTES',
    readBy: FLEET,
    default: '`65536`',
    description:
      'activity results, run results, signal payloads and run inputs whose JSON is larger are stored by reference (a SHA-256 in the journal, the bytes in the payload store), or `off` ([docs/large-payloads.md](docs/large-payloads.md))',
  },
  payloadRefLocation: {
    name: 'BATON_PAYLOAD_REF_LOCATION',
    readBy: FLEET,
    default: '`store`',
    description:
      'where those bytes go: `store` (Redis or Postgres) or `nats-object-store` (a JetStream object store; NATS only). Every worker and client of a fleet needs the same one',
  },
  payloadRefBucket: {
    name: 'BATON_PAYLOAD_REF_BUCKET',
    readBy: FLEET,
    default: '`BATON_PAYLOADS`',
    description: 'the object store bucket with `nats-object-store`; created on first connect',
  },
} as const satisfies Record<string, Declared>;

/** The producer's own variables (apps/worker/src/producer.ts), keyed as in its PRODUCER_ENV. */
const PRODUCER_VARIABLES = {
  rate: {
    name: 'BATON_PRODUCER_RATE',
    readBy: PRODUCER,
    default: '`2`',
    description: 'runs enqueued per second: a number above 0 and at most 1000 (`0.5` is one run every 2 s)',
  },
  runs: {
    name: 'BATON_PRODUCER_RUNS',
    readBy: PRODUCER,
    default: '`0`',
    description: 'runs in total, after which the producer exits 0; `0` enqueues until SIGTERM or SIGINT',
  },
  heartbeatFile: {
    name: 'BATON_PRODUCER_HEARTBEAT_FILE',
    readBy: PRODUCER,
    default: 'none',
    description:
      'a file rewritten every 5 s while enqueues succeed, for a healthcheck that reads its age (Compose uses it)',
  },
} as const satisfies Record<string, Declared>;

/** The console's own variables (libs/console/src/config.ts), keyed as in its CONSOLE_ENV. */
const CONSOLE_VARIABLES = {
  host: {
    name: 'BATON_CONSOLE_HOST',
    readBy: CONSOLE,
    default: '`127.0.0.1`',
    description: 'address to bind; anything but loopback needs a token or a trusted header',
    flag: { name: '--host', argument: 'host', help: 'address to bind (loopback by default)' },
  },
  port: {
    name: 'BATON_CONSOLE_PORT',
    readBy: CONSOLE,
    default: '`8636`',
    description: 'port to listen on',
    flag: { name: '--port', argument: 'port', help: 'port to listen on' },
  },
  token: {
    name: 'BATON_CONSOLE_TOKEN',
    readBy: CONSOLE,
    default: 'none',
    description:
      'access token, 16 characters at least: `Authorization: Bearer` for scripts, a sign-in form for browsers',
    secret: true,
    flag: {
      name: '--token',
      argument: 'token',
      help: 'access token, required beyond loopback (prefer the variable: a flag shows in ps)',
    },
  },
  readOnly: {
    name: 'BATON_CONSOLE_READ_ONLY',
    readBy: CONSOLE,
    default: '`false`',
    description: 'hide and refuse every action',
    flag: { name: '--read-only', help: 'hide and refuse every action' },
  },
  trustedHeader: {
    name: 'BATON_CONSOLE_TRUSTED_HEADER',
    readBy: CONSOLE,
    default: 'none',
    description:
      'a header an authenticating reverse proxy sets to the user; a request carrying it is let in (docs/console.md)',
  },
  metricsUrls: {
    name: 'BATON_CONSOLE_METRICS_URLS',
    readBy: CONSOLE,
    default: 'none',
    description:
      "comma-separated workers' `/metrics` URLs for the workers page's last-hour figures (the flag: one URL, repeated)",
    flag: {
      name: '--metrics-url',
      argument: 'url',
      help: "a worker's /metrics URL for the workers page's figures; repeat for each worker",
      repeatable: true,
    },
  },
  storeTimeoutMs: {
    name: 'BATON_CONSOLE_STORE_TIMEOUT_MS',
    readBy: CONSOLE,
    default: '`5000`',
    description: 'how long one store call may take before the request is answered 503 with `Retry-After`',
    flag: {
      name: '--store-timeout',
      argument: 'duration',
      help: 'how long one store call may take before the page gets a 503 to retry, e.g. 5s or milliseconds',
    },
  },
  clientAddressHeader: {
    name: 'BATON_CONSOLE_CLIENT_ADDRESS_HEADER',
    readBy: CONSOLE,
    default: 'none',
    description:
      "behind a reverse proxy, the header it sets to the client's address (e.g. `X-Forwarded-For`); the sign-in rate limit counts by its last entry (docs/console.md)",
  },
  apiWebhookSecret: {
    name: 'BATON_API_WEBHOOK_SECRET',
    readBy: CONSOLE,
    default: 'none',
    description:
      '`baton serve`: webhook secret(s), comma-separated while rotating: a POST to the HTTP API signed in `Baton-Signature` needs no token ([docs/http-api.md](docs/http-api.md#webhooks))',
    secret: true,
  },
} as const satisfies Record<string, Declared>;

/** `nats` + `prefix` -> `natsPrefix`: an adapter variable's key in {@link ENV}. */
type AdapterEnvKey<R> =
  R extends AdapterRegistration<infer Name, 'transport' | 'store', infer S>
    ? `${Name}${Capitalize<keyof S & string>}`
    : never;
type AdapterKey = AdapterEnvKey<RegisteredAdapter>;

/**
 * The CLI's flags for adapter variables, keyed as in {@link ENV}: an installation's namespace is
 * what an operator most often points a command at, so each namespace variable has a flag.
 */
const ADAPTER_FLAGS: Partial<Record<AdapterKey, VariableFlag>> = {
  natsPrefix: { name: '--nats-prefix', argument: 'prefix', help: 'NATS stream prefix' },
  kafkaPrefix: { name: '--kafka-prefix', argument: 'prefix', help: 'Kafka topic prefix' },
  redisBusPrefix: { name: '--redis-bus-prefix', argument: 'prefix', help: 'Redis transport key prefix' },
  redisKeyPrefix: { name: '--redis-key-prefix', argument: 'prefix', help: 'Redis store key prefix' },
  postgresSchema: { name: '--postgres-schema', argument: 'schema', help: 'Postgres schema' },
};

/** Each registered adapter's variables, keyed as in {@link ENV} (`natsPrefix`). */
function adapterVariables(): [AdapterKey, BatonVariable][] {
  return ADAPTERS.flatMap((registration) =>
    (Object.entries(registration.variables) as [string, AdapterVariable<unknown>][]).map(([setting, v]) => {
      const key = `${registration.name}${setting.charAt(0).toUpperCase()}${setting.slice(1)}` as AdapterKey;
      const flag = ADAPTER_FLAGS[key];
      const row: BatonVariable = {
        name: v.name,
        // A producer connects to the bus only; the operator tools to both, as the workers do.
        readBy: registration.kind === 'transport' ? BUS : FLEET,
        description: v.description,
        default: v.default ?? 'none',
        secret: v.secret ?? false,
        ...(flag !== undefined && { flag }),
      };
      return [key, row] as [AdapterKey, BatonVariable];
    }),
  );
}

function complete(row: Declared): BatonVariable {
  return { ...row, default: row.default ?? 'none', secret: row.secret ?? false };
}

const ADAPTER_VARIABLES = adapterVariables();

/**
 * Every BATON_* variable a Baton process reads: the worker's own, the adapters', the
 * producer's and the console's, in the order docs/configuration.md shows them.
 */
export const VARIABLES: readonly BatonVariable[] = [
  ...Object.values(WORKER_VARIABLES).map(complete),
  ...ADAPTER_VARIABLES.map(([, row]) => row),
  ...Object.values(PRODUCER_VARIABLES).map(complete),
  ...Object.values(CONSOLE_VARIABLES).map(complete),
];

type NamesOf<T extends Record<string, { readonly name: string }>> = { readonly [K in keyof T]: T[K]['name'] };

function namesOf<T extends Record<string, { readonly name: string }>>(rows: T): NamesOf<T> {
  return Object.fromEntries(Object.entries(rows).map(([key, row]) => [key, row.name])) as NamesOf<T>;
}

/** Names of the environment variables the worker process reads (the adapters' from registry.ts). */
export const ENV: NamesOf<typeof WORKER_VARIABLES> & { readonly [Key in AdapterKey]: string } = {
  ...namesOf(WORKER_VARIABLES),
  ...(Object.fromEntries(ADAPTER_VARIABLES.map(([key, row]) => [key, row.name])) as {
    readonly [Key in AdapterKey]: string;
  }),
};

/** The producer's own variables (besides the bus, the log level and the payload keys). */
export const PRODUCER_ENV: NamesOf<typeof PRODUCER_VARIABLES> = namesOf(PRODUCER_VARIABLES);

/** The variables the console reads, besides the fleet's BATON_* connection variables. */
export const CONSOLE_ENV: NamesOf<typeof CONSOLE_VARIABLES> = namesOf(CONSOLE_VARIABLES);

/** The names of the variables `reader` reads, in table order. */
export function variablesReadBy(reader: VariableReader): string[] {
  return VARIABLES.filter((v) => v.readBy.includes(reader)).map((v) => v.name);
}
