/**
 * The worker process's configuration, read once from the environment at start-up. Every mistake
 * is reported with the variable's name, what was found and what to do, before anything connects.
 */
import { ConfigError } from '@baton/core';
import { parseWholeNumber, type AdapterRegistration, type AdapterVariable } from '@baton/core/adapter';
import { resolvePayloadProtection, type PayloadProtection } from '@baton/core/runtime';
import type { WorkerOptions } from '@baton/worker';
import { ADAPTERS, type RegisteredAdapter } from './registry.js';
import { ENV } from './variables.js';

type SettingsOf<R> = R extends AdapterRegistration<string, 'transport' | 'store', infer S> ? S : never;

/** Each registered adapter's settings under its name (`config.kafka.partitions`). */
export type AdapterSettings = { [R in RegisteredAdapter as R['name']]: SettingsOf<R> };

// The names are declared with everything else about each variable in variables.ts.
export { ENV };

/** Where large payloads are kept: in the store (default), or in a JetStream object store (NATS only). */
export const PAYLOAD_REF_LOCATIONS = ['store', 'nats-object-store'] as const;
export type PayloadRefLocation = (typeof PAYLOAD_REF_LOCATIONS)[number];

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const LOG_FORMATS = ['json', 'pretty'] as const;
/** How the worker process writes its log lines (BATON_LOG_FORMAT). */
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * The log format BATON_LOG_FORMAT's `value` names; unset or blank, `pretty` when the log goes to a
 * terminal and `json` otherwise. A ConfigError naming the variable for any other value.
 */
export function logFormatOf(value: string | undefined, terminal: boolean): LogFormat {
  const given = value?.trim().toLowerCase();
  if (given === undefined || given === '') return terminal ? 'pretty' : 'json';
  const format = LOG_FORMATS.find((f) => f === given);
  if (format === undefined)
    throw new ConfigError(`${ENV.logFormat} is '${value}'; use one of ${LOG_FORMATS.join(', ')}`);
  return format;
}

/** Worker options given by the environment; unset ones keep the Worker's own defaults. */
export type WorkerTuning = Partial<
  Pick<
    WorkerOptions,
    | 'concurrency'
    | 'leaseMs'
    | 'heartbeatMs'
    | 'reapIntervalMs'
    | 'deadWorkerScanMs'
    | 'missingVersionGraceMs'
    | 'retentionMs'
    | 'retentionTombstoneMs'
    | 'groupLogTrimMs'
    | 'scheduleScanMs'
    | 'checkpointEvery'
    | 'historySoftEntries'
    | 'historySoftBytes'
    | 'historyMaxEntries'
    | 'historyMaxBytes'
    | 'memoryBudgetBytes'
    | 'memoryResumeBytes'
    | 'pipelineSteps'
    | 'journal'
    | 'maxMessageBytes'
    | 'maxDeliveries'
    | 'maxResumeFailures'
    | 'resumeBackoffMs'
    | 'resumeBackoffMaxMs'
    | 'drainTimeoutMs'
    | 'departedRetentionMs'
    | 'inProcessWaitMs'
    | 'fetchWaitMs'
    | 'workerId'
  >
>;

/**
 * The variable behind each Worker option the environment sets: a Worker's ConfigError names the
 * option (`heartbeatMs`), the worker process reports the variable. Keyed by {@link WorkerTuning},
 * so an option added there without a variable here does not compile.
 */
export const WORKER_OPTION_VARIABLES: { readonly [Option in keyof WorkerTuning]-?: string } & {
  readonly 'largePayloads.thresholdBytes': string;
} = {
  concurrency: ENV.concurrency,
  leaseMs: ENV.leaseMs,
  heartbeatMs: ENV.heartbeatMs,
  reapIntervalMs: ENV.reapIntervalMs,
  deadWorkerScanMs: ENV.deadWorkerScanMs,
  missingVersionGraceMs: ENV.missingVersionGraceMs,
  retentionMs: ENV.retentionMs,
  retentionTombstoneMs: ENV.retentionTombstoneMs,
  groupLogTrimMs: ENV.groupLogTrimMs,
  scheduleScanMs: ENV.scheduleScanMs,
  checkpointEvery: ENV.checkpointEvery,
  historySoftEntries: ENV.historySoftEntries,
  historySoftBytes: ENV.historySoftBytes,
  historyMaxEntries: ENV.historyMaxEntries,
  historyMaxBytes: ENV.historyMaxBytes,
  // Set in MiB; readConfig checks them before the Worker sees bytes.
  memoryBudgetBytes: ENV.memoryBudgetMib,
  memoryResumeBytes: ENV.memoryResumeMib,
  pipelineSteps: ENV.pipelineSteps,
  journal: ENV.journal,
  maxMessageBytes: ENV.maxMessageBytes,
  maxDeliveries: ENV.maxDeliveries,
  maxResumeFailures: ENV.maxResumeFailures,
  resumeBackoffMs: ENV.resumeBackoffMs,
  resumeBackoffMaxMs: ENV.resumeBackoffMaxMs,
  drainTimeoutMs: ENV.drainTimeoutMs,
  departedRetentionMs: ENV.departedRetentionMs,
  inProcessWaitMs: ENV.inProcessWaitMs,
  fetchWaitMs: ENV.fetchWaitMs,
  workerId: ENV.workerId,
  'largePayloads.thresholdBytes': ENV.payloadRefThresholdBytes,
};

/** The worker process's configuration; each adapter's settings are under its name (`config.nats`). */
export type WorkerAppConfig = WorkerProcessConfig & AdapterSettings;

/** What the worker process itself reads, apart from the adapters' settings. */
export interface WorkerProcessConfig {
  transportUrl: string;
  storeUrl: string;
  /** Module specifiers or paths (resolved from the working directory) exporting workflows. */
  workflowModules: string[];
  tuning: WorkerTuning;
  /** Hard limit for SIGTERM handling; past it the process exits anyway (leases then expire). */
  shutdownTimeoutMs: number;
  logLevel: LogLevel;
  /** The /healthz, /readyz and /metrics server. Port 0 picks a free port (logged at start). */
  http: { host: string; port: number; livenessStallMs: number };
  /**
   * Compression, encryption and signing of journal records and checkpoints, from the BATON_*
   * key variables; the identity (nothing) when none is set. Holds keys: never log it (log
   * `describePayloadProtection(...)`, which shows ids only).
   */
  payloadProtection: PayloadProtection;
  /** The claim check: values above the threshold go by reference to `location`. */
  largePayloads: {
    /** @defaultValue 65536 (the Worker's default) */
    thresholdBytes?: number | 'off';
    location: PayloadRefLocation;
    /** The object store bucket with `nats-object-store`. @defaultValue BATON_PAYLOADS */
    bucket?: string;
  };
}

/** Defaults of the HTTP server. */
export const HTTP_DEFAULTS = { host: '0.0.0.0', port: 8080, livenessStallMs: 30_000 } as const;

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function readConfig(env: Env = process.env): WorkerAppConfig {
  const transportUrl = required(env, ENV.transportUrl, 'nats://127.0.0.1:4222');
  const storeUrl = required(env, ENV.storeUrl, 'redis://127.0.0.1:6379 or postgres://user@host:5432/db');
  const workflowModules = required(env, ENV.workflows, './dist/workflows.js,@acme/billing-workflows')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (workflowModules.length === 0) {
    throw new ConfigError(
      `${ENV.workflows} lists no module; give comma-separated modules exporting workflows`,
    );
  }
  const drainTimeoutMs = int(env, ENV.drainTimeoutMs, 0);
  const tuning: WorkerTuning = {
    concurrency: int(env, ENV.concurrency, 1),
    leaseMs: int(env, ENV.leaseMs, 1),
    heartbeatMs: int(env, ENV.heartbeatMs, 1),
    reapIntervalMs: int(env, ENV.reapIntervalMs, 1),
    deadWorkerScanMs: int(env, ENV.deadWorkerScanMs, 0),
    missingVersionGraceMs: int(env, ENV.missingVersionGraceMs, 0),
    retentionMs: int(env, ENV.retentionMs, 0),
    retentionTombstoneMs: int(env, ENV.retentionTombstoneMs, 1),
    groupLogTrimMs: int(env, ENV.groupLogTrimMs, 0),
    scheduleScanMs: int(env, ENV.scheduleScanMs, 0),
    checkpointEvery: int(env, ENV.checkpointEvery, 1),
    historySoftEntries: int(env, ENV.historySoftEntries, 0),
    historySoftBytes: int(env, ENV.historySoftBytes, 0),
    historyMaxEntries: int(env, ENV.historyMaxEntries, 0),
    historyMaxBytes: int(env, ENV.historyMaxBytes, 0),
    ...readMemoryBudget(env),
    pipelineSteps: bool(env, ENV.pipelineSteps),
    journal: journalMode(env, ENV.journal),
    maxMessageBytes: int(env, ENV.maxMessageBytes, 1),
    maxDeliveries: int(env, ENV.maxDeliveries, 1),
    maxResumeFailures: int(env, ENV.maxResumeFailures, 1),
    resumeBackoffMs: int(env, ENV.resumeBackoffMs, 1),
    resumeBackoffMaxMs: int(env, ENV.resumeBackoffMaxMs, 1),
    drainTimeoutMs,
    departedRetentionMs: int(env, ENV.departedRetentionMs, 0),
    inProcessWaitMs: int(env, ENV.inProcessWaitMs, 0),
    fetchWaitMs: int(env, ENV.fetchWaitMs, 1),
    workerId: optional(env, ENV.workerId),
  };
  const { resumeBackoffMs, resumeBackoffMaxMs } = tuning;
  if (resumeBackoffMaxMs !== undefined && resumeBackoffMaxMs < (resumeBackoffMs ?? 1_000)) {
    throw new ConfigError(
      `${ENV.resumeBackoffMaxMs} (${resumeBackoffMaxMs}) must be at least ${ENV.resumeBackoffMs} ` +
        `(${resumeBackoffMs ?? 1_000}): it caps the wait between failed resumes that starts there`,
    );
  }
  const shutdownTimeoutMs = int(env, ENV.shutdownTimeoutMs, 1) ?? (drainTimeoutMs ?? 10_000) + 15_000;
  if (drainTimeoutMs !== undefined && shutdownTimeoutMs <= drainTimeoutMs) {
    throw new ConfigError(
      `${ENV.shutdownTimeoutMs} (${shutdownTimeoutMs}) must be above ${ENV.drainTimeoutMs} (${drainTimeoutMs}), ` +
        'so in-flight activities can finish and runs be handed off before the process gives up',
    );
  }
  // A short key, an unknown active id or a shared key fails here, naming the variable, never a key.
  const payloadProtection = resolvePayloadProtection({}, env);
  const largePayloads = readLargePayloads(env, transportUrl);
  const logLevel = (optional(env, ENV.logLevel) ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`${ENV.logLevel} is '${logLevel}'; use one of ${LOG_LEVELS.join(', ')}`);
  }
  // Checked with the rest: the process chose its format when it built its logger, before this.
  logFormatOf(env[ENV.logFormat], false);
  return {
    transportUrl,
    storeUrl,
    workflowModules,
    tuning,
    shutdownTimeoutMs,
    logLevel,
    ...readAdapterSettings(env),
    http: {
      host: optional(env, ENV.httpHost) ?? HTTP_DEFAULTS.host,
      port: port(env, ENV.httpPort) ?? HTTP_DEFAULTS.port,
      livenessStallMs: int(env, ENV.livenessStallMs, 1_000) ?? HTTP_DEFAULTS.livenessStallMs,
    },
    payloadProtection,
    largePayloads,
  };
}

const MIB = 1024 * 1024;

/** The memory budget from its variables, in MiB (0: off); the resume mark must be below the budget. */
function readMemoryBudget(env: Env): Pick<WorkerTuning, 'memoryBudgetBytes' | 'memoryResumeBytes'> {
  const budget = int(env, ENV.memoryBudgetMib, 0);
  const resume = int(env, ENV.memoryResumeMib, 1);
  if (resume !== undefined) {
    if (budget === undefined)
      throw new ConfigError(
        `${ENV.memoryResumeMib} (${resume}) is set without ${ENV.memoryBudgetMib}: set the budget it resumes under`,
      );
    if (budget > 0 && resume >= budget)
      throw new ConfigError(
        `${ENV.memoryResumeMib} (${resume}) must be below ${ENV.memoryBudgetMib} (${budget}): claims stop above ` +
          'the budget and start again at or below the resume mark',
      );
  }
  return {
    ...(budget !== undefined && { memoryBudgetBytes: budget * MIB }),
    ...(resume !== undefined && budget !== 0 && { memoryResumeBytes: resume * MIB }),
  };
}

function readLargePayloads(env: Env, transportUrl: string): WorkerAppConfig['largePayloads'] {
  const threshold = optional(env, ENV.payloadRefThresholdBytes);
  const thresholdBytes =
    threshold?.toLowerCase() === 'off' ? 'off' : int(env, ENV.payloadRefThresholdBytes, 1);
  const location = (optional(env, ENV.payloadRefLocation) ?? 'store') as PayloadRefLocation;
  if (!PAYLOAD_REF_LOCATIONS.includes(location)) {
    throw new ConfigError(
      `${ENV.payloadRefLocation} is '${location}'; use one of ${PAYLOAD_REF_LOCATIONS.join(', ')}`,
    );
  }
  if (location === 'nats-object-store' && !/^(nats|tls):/i.test(transportUrl)) {
    throw new ConfigError(
      `${ENV.payloadRefLocation} is nats-object-store, which needs a NATS bus; ${ENV.transportUrl} is not nats:// or tls://. ` +
        `Use ${ENV.payloadRefLocation}=store`,
    );
  }
  const bucket = optional(env, ENV.payloadRefBucket);
  if (bucket !== undefined && location !== 'nats-object-store') {
    throw new ConfigError(
      `${ENV.payloadRefBucket} is set, but ${ENV.payloadRefLocation} is not nats-object-store`,
    );
  }
  return {
    ...(thresholdBytes !== undefined && { thresholdBytes }),
    location,
    ...(bucket !== undefined && { bucket }),
  };
}

/**
 * Every registered adapter's variables, the chosen ones or not (a mistake in any is reported at
 * start, not when the URL later points at that adapter); unset ones are left undefined.
 */
function readAdapterSettings(env: Env): AdapterSettings {
  const all: Record<string, Record<string, unknown>> = {};
  for (const registration of ADAPTERS) {
    const variables = Object.entries(registration.variables) as [string, AdapterVariable<unknown>][];
    all[registration.name] = Object.fromEntries(
      variables.map(([setting, variable]) => {
        const raw = optional(env, variable.name);
        return [setting, raw === undefined ? undefined : variable.parse(raw, variable.name)];
      }),
    );
  }
  return all as unknown as AdapterSettings;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function bool(env: Env, name: string): boolean | undefined {
  const value = optional(env, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} is '${value}'; use true or false`);
}

function journalMode(env: Env, name: string): 'group' | 'per-run' | undefined {
  const value = optional(env, name)?.toLowerCase();
  if (value === undefined || value === 'group' || value === 'per-run') return value;
  throw new ConfigError(`${name} is '${value}'; use group or per-run`);
}

function required(env: Env, name: string, example: string): string {
  const value = optional(env, name);
  if (value === undefined)
    throw new ConfigError(`${name} is not set; set it, for example ${name}=${example}`);
  return value;
}

function port(env: Env, name: string): number | undefined {
  const value = int(env, name, 0);
  if (value !== undefined && value > 65_535) {
    throw new ConfigError(`${name} is '${value}'; a TCP port is 0-65535 (0 picks a free one)`);
  }
  return value;
}

function int(env: Env, name: string, min: number): number | undefined {
  const raw = optional(env, name);
  return raw === undefined ? undefined : parseWholeNumber(name, raw, min);
}
