/**
 * Worker options, resolved once at construction into a complete {@link ResolvedWorkerOptions}.
 * Cross-field rules are checked here, so a typo fails at start-up, never on the first failover.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ConfigError, type AnyWorkflowDefinition } from '@baton/core';
import { DEFAULT_HISTORY_LIMITS, type HistoryLimits } from '@baton/core/runtime';
import { invalidOption } from '@baton/core/adapter';
import type { Store, Transport } from '@baton/core/adapter';
import {
  supportsGroupJournal,
  withGroupJournal,
  type JournalMode,
  resolveClaimCheck,
  resolvePayloadProtection,
  type ClaimCheck,
  type LargePayloadOptions,
  type PayloadProtection,
  type PayloadProtectionOptions,
} from '@baton/core/runtime';
import { FleetJournalGate } from './fleet/journal-gate.js';
import {
  DEFAULT_RESUME_SHARE,
  defaultMemoryBudgetBytes,
  gcLiveHeap,
  v8HeapUsed,
  type LiveHeapSource,
  type MemoryBudgetSettings,
} from './memory-budget.js';
import type { FaultHook } from './faults.js';
import { silentLogger, type Logger } from './logger.js';
import type { RunEventContext, WorkerEvent } from './events.js';

export interface WorkerOptions {
  transport: Transport;
  store: Store;
  workflows: ReadonlyArray<AnyWorkflowDefinition>;
  /** Runs executed at once by this worker. @defaultValue 100 */
  concurrency?: number;
  /** Lease duration on the store's clock; a crashed worker's runs are reaped after this. @defaultValue 5000 */
  leaseMs?: number;
  /** Interval of the batched lease renewal. Must be below leaseMs / 2. @defaultValue leaseMs / 3 */
  heartbeatMs?: number;
  /**
   * Interval of the reaper and timer scans. On a store with presence the fleet takes them in turns:
   * one worker scans per interval, whatever the fleet's size. @defaultValue min(1000, leaseMs / 2)
   */
  reapIntervalMs?: number;
  /**
   * How often the fleet asks the store for workers whose presence connection dropped (killed
   * processes), whose runs are then resumed without waiting for their leases to run out. The
   * workers take this scan in turns: one of them scans per interval (maintenance.ts). 0 turns it
   * off (lease expiry alone). @defaultValue 150
   */
  deadWorkerScanMs?: number;
  /**
   * A start message for a workflow version this worker does not register is put back while some
   * live worker registers that version (the fleet reports say which), and also while none does,
   * until none has for this long (as this worker sees the fleet); only then is it dead-lettered
   * with `unknown-workflow`. Such letters are redriven by themselves when a worker that registers
   * the version starts (docs/versioning.md). 0 dead-letters as soon as no live worker has the
   * version. @defaultValue 60000
   */
  missingVersionGraceMs?: number;
  /**
   * Retention: finished runs (completed, failed, cancelled) whose finish is older than this lose
   * their store data and their journal (purged on NATS; on Kafka it stays until the journal
   * topic's `retention.ms`). Unfinished runs are never touched. 0 keeps everything forever
   * (docs/retention.md). @defaultValue 0
   */
  retentionMs?: number;
  /**
   * Interval of the retention sweep. A pass deletes batches while expired runs remain (bounded by
   * count and time; a bounded pass is followed by the next soon). @defaultValue min(60_000, retentionMs)
   */
  retentionSweepMs?: number;
  /**
   * How long the tombstone of a run the sweep deleted lives: `client.result()` of that run fails
   * at once with RunDeletedError meanwhile. @defaultValue retentionMs
   */
  retentionTombstoneMs?: number;
  /**
   * How often the fleet trims group logs (group commit): records no kept run's pointer names any
   * more (every run in them was deleted) are removed from the bus. One worker per period does it,
   * in turns. 0 turns it off (the records then stay until the bus's own limits). Only with a group
   * journal. @defaultValue 60_000
   */
  groupLogTrimMs?: number;
  /**
   * How often the fleet looks for due schedules and starts their runs (docs/schedules.md). One
   * worker per period scans, in turns; a due time starts late by up to about this much (plus its
   * jitter). 0: this worker fires no schedule. @defaultValue 1_000
   */
  scheduleScanMs?: number;
  /** Write a checkpoint after this many journal entries since the last one. @defaultValue 100 */
  checkpointEvery?: number;
  /**
   * A run's history at this many entries is past its soft limit: the worker warns (once per run),
   * the console flags the run, `ctx.historyInfo().suggested` turns true (docs/continue-as-new.md,
   * "Bounded histories"). 0: no soft limit on entries. @defaultValue 10_000
   */
  historySoftEntries?: number;
  /** The soft limit on the history's encoded bytes, as {@link historySoftEntries}. 0: none. @defaultValue 10 MiB */
  historySoftBytes?: number;
  /**
   * A run's history at this many entries is at its hard limit: the run fails with
   * HistoryLimitError (BATON_HISTORY_LIMIT) at its next entry, its end excepted. 0: no hard limit
   * on entries. @defaultValue 50_000
   */
  historyMaxEntries?: number;
  /** The hard limit on the history's encoded bytes, as {@link historyMaxEntries}. 0: none. @defaultValue 50 MiB */
  historyMaxBytes?: number;
  /**
   * Memory budget for in-flight runs, in bytes of V8 heap: while the heap is above it, the worker
   * claims no new run (runs already claimed go on; messages stay on the bus), and it claims again
   * once the heap is at or below {@link memoryResumeBytes}. With no run in flight it still claims
   * one at a time, so a budget below one run's need never stalls the worker. 0 turns it off
   * (memory-budget.ts, docs/performance.md).
   * @defaultValue a quarter of the smaller of the container's memory limit and V8's heap limit
   */
  memoryBudgetBytes?: number;
  /** Claims resume once the heap is at or below this; below the budget. @defaultValue 80% of the budget */
  memoryResumeBytes?: number;
  /**
   * The used heap in bytes, read at start (the idle worker's heap) and at each full GC (the live
   * heap). For tests that drive the budget without filling the heap.
   * @defaultValue V8's used heap size (`v8.getHeapStatistics().used_heap_size`)
   */
  heapUsed?: () => number;
  /**
   * When the live heap is read (memory-budget.ts). For tests that drive the budget without filling
   * the heap. @defaultValue after each full GC, from V8's `gc` performance entries
   */
  liveHeap?: LiveHeapSource;
  /**
   * Pipelined steps: an idempotent activity's result reaches the workflow before its journal
   * entry is durable, so a run's consecutive idempotent steps share journal records and round
   * trips. Runs still finish, suspend and hand off only with every entry durable, and
   * non-idempotent activities still start only after everything before them is durable. The
   * price: after a crash, idempotent steps whose entries were not yet durable run again, and may
   * compute different inputs for later steps the second time. See docs/performance.md.
   * @defaultValue false
   */
  pipelineSteps?: boolean;
  /**
   * How new runs are journaled (docs/performance.md, "Group commit across runs"): `group` puts the
   * entries of every run appended while the previous flush is in flight into one record of this
   * worker's own log, and records each run's pointer to it in the store (a bus with group logs and a
   * store with a journal index); `per-run` gives each run a journal of its own, readable on its own
   * subject or key. Either way, runs of the other kind are resumed as they are, so a fleet may switch
   * in either direction with a rolling deploy.
   * @defaultValue 'group' when the bus has group logs and either the store's journal index groups
   * by default (Redis, memory) or the bus's own journal scans a shared log (Kafka); new runs are
   * grouped once every live worker reads group journals, see {@link fleetJournalCheckMs}. Else
   * 'per-run' (NATS with Postgres: docs/performance.md)
   */
  journal?: JournalMode;
  /**
   * With `journal` left to its default: how often a worker looks at the fleet listing until every
   * live worker reads group journals; until then it journals new runs per run, so a rolling
   * upgrade from a release without group commit never hands a grouped run to a worker that cannot
   * read it (docs/versioning.md). @defaultValue 10_000
   */
  fleetJournalCheckMs?: number;
  /** Messages larger than this are dead-lettered. @defaultValue 1 MiB */
  maxMessageBytes?: number;
  /** A message that failed this many deliveries is dead-lettered. @defaultValue 20 */
  maxDeliveries?: number;
  /** On stop(), how long in-flight activities may run before they are aborted. @defaultValue 10_000 */
  drainTimeoutMs?: number;
  /**
   * How long the store keeps this worker's record once it has left (`client.fleet.departed()`,
   * `baton workers --all`, the console's workers page): when it was last seen, how it ended
   * (`handed-off` after a graceful stop, `expired` when its report ran out: killed, frozen, cut
   * off) and the runs it held (at most 100). 0 keeps none. @defaultValue 3_600_000 (one hour)
   */
  departedRetentionMs?: number;
  /** Timers due sooner than this are waited for in process instead of suspending. @defaultValue 1000 */
  inProcessWaitMs?: number;
  /** How long one fetch waits for messages. @defaultValue 1000 */
  fetchWaitMs?: number;
  /** This worker's identity in leases and logs. @defaultValue `<hostname>-<pid>-<random>` */
  workerId?: string;
  /** A pino-compatible logger. @defaultValue silent */
  logger?: Logger;
  /**
   * Observes what the worker does (progress displays, metrics). Must not throw. `run` comes with
   * the events of a claimed run: its workflow and trace ids, for logging them with the event.
   */
  onEvent?: (event: WorkerEvent, run?: RunEventContext) => void;
  /** Named fault points for tests: called at exact places of the run lifecycle. */
  faults?: FaultHook;
  /**
   * Compression, encryption, checkpoint signing and the hash chain of journal records and
   * checkpoints (docs/integrity.md): a resolved protection (`resolvePayloadProtection(...)`, as the
   * worker app builds it from the BATON_* variables), or its options. The Worker reads no
   * environment variable itself. Every worker and reader of one fleet needs the same keys.
   * @defaultValue nothing: the identity codec, no checks
   */
  payloadProtection?: PayloadProtection | PayloadProtectionOptions;
  /**
   * How long a run waits before a worker tries it again when this worker cannot read it yet: its
   * data names a key this worker lacks, or its checkpoint has a schema version newer than it knows.
   * The run is left intact (suspended with a timer), never failed, so an operator can act.
   * @defaultValue 60_000
   */
  unreadableRetryMs?: number;
  /**
   * A run whose resume fails (the session throws) on this many claims in a row is failed with
   * ResumeFailedError and the last error, instead of being claimed again for ever. A lost lease,
   * a fenced write and an unavailable store or bus do not count (claim-failures.ts).
   * @defaultValue 5
   */
  maxResumeFailures?: number;
  /**
   * After the n-th failed resume in a row the run is suspended for `min(resumeBackoffMaxMs,
   * resumeBackoffMs * 2^(n-1))` before another claim. @defaultValue 1_000
   */
  resumeBackoffMs?: number;
  /** The cap of that wait. @defaultValue 60_000 */
  resumeBackoffMaxMs?: number;
  /**
   * Large payloads by reference (docs/large-payloads.md): activity results, run results and
   * signal payloads whose JSON is above `thresholdBytes` are stored in `payloads` and journaled as
   * a SHA-256 reference; the worker reads them back, verified, before a replay. Every worker and
   * client of a fleet needs the same `payloads` location.
   * @defaultValue `{ thresholdBytes: 65536, payloads: store }`
   */
  largePayloads?: LargePayloadOptions;
  /**
   * This process's clock (ms since epoch), for tests that skew one worker's clock without touching
   * the machine's. The worker never compares it with a store time directly: it measures the
   * store's offset from it (docs/architecture.md, "Time"). @defaultValue Date.now
   */
  clock?: () => number;
}

export interface ResolvedWorkerOptions extends Required<
  Omit<
    WorkerOptions,
    | 'onEvent'
    | 'faults'
    | 'payloadProtection'
    | 'largePayloads'
    | 'memoryBudgetBytes'
    | 'memoryResumeBytes'
    | 'heapUsed'
    | 'liveHeap'
    | 'historySoftEntries'
    | 'historySoftBytes'
    | 'historyMaxEntries'
    | 'historyMaxBytes'
  >
> {
  /** The soft and hard limits on a run's history (history-bounds.ts); 0 is off. */
  historyLimits: HistoryLimits;
  onEvent: (event: WorkerEvent, run?: RunEventContext) => void;
  faults: FaultHook | undefined;
  payloadProtection: PayloadProtection;
  /** Stores and resolves large values (with the threshold off it only resolves). */
  claimCheck: ClaimCheck;
  /** The memory budget for in-flight runs, resolved (budgetBytes 0: off). */
  memoryBudget: MemoryBudgetSettings;
  /** True when the worker resumes runs journaled through group records (its fleet report says so). */
  readsGroupJournal: boolean;
  /** Where the journal reports the bytes each read fetched from the bus (the Worker meters it). */
  journalReads: JournalReadTap;
  /**
   * With the journal mode left to its default on a bus and store that can group: the gate that
   * groups new runs only once every live worker reads group journals (journal-gate.ts).
   */
  journalGate: FleetJournalGate | undefined;
}

export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  if (!options.transport)
    throw new ConfigError('Worker needs a transport: pass `transport` (e.g. memoryTransport())');
  if (!options.store) throw new ConfigError('Worker needs a store: pass `store` (e.g. memoryStore())');
  if (!options.workflows || options.workflows.length === 0) {
    throw new ConfigError('Worker needs at least one workflow: pass `workflows: [myWorkflow]`');
  }
  const workflows = distinctWorkflows(options.workflows);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 5_000);
  const heartbeatMs = positive('heartbeatMs', options.heartbeatMs ?? Math.floor(leaseMs / 3));
  if (heartbeatMs >= leaseMs / 2) {
    const expected = `must be below leaseMs/2 (${leaseMs / 2}) so a renewal lands before the lease expires`;
    throw invalidOption(
      { option: 'heartbeatMs', value: String(heartbeatMs), expected: `it ${expected}`, related: ['leaseMs'] },
      `heartbeatMs (${heartbeatMs}) ${expected}`,
    );
  }
  const payloadProtection = resolveProtection(options.payloadProtection);
  const resumeBackoffMs = positive('resumeBackoffMs', options.resumeBackoffMs ?? 1_000);
  const resumeBackoffMaxMs = positive('resumeBackoffMaxMs', options.resumeBackoffMaxMs ?? 60_000);
  if (resumeBackoffMaxMs < resumeBackoffMs) {
    const expected = `must be at least resumeBackoffMs (${resumeBackoffMs}): it caps the wait that starts there`;
    throw invalidOption(
      {
        option: 'resumeBackoffMaxMs',
        value: String(resumeBackoffMaxMs),
        expected: `it ${expected}`,
        related: ['resumeBackoffMs'],
      },
      `resumeBackoffMaxMs (${resumeBackoffMaxMs}) ${expected}`,
    );
  }
  const workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const readsGroupJournal = supportsGroupJournal(options.transport, options.store);
  // A bus whose own journal scans a shared log (Kafka) makes per-run journaling cost a bus append
  // per step and a checkpoint per session (run-session.ts anchors such a run): group records cost
  // less there whatever the store (docs/performance.md, "Kafka+Postgres: group commit by default").
  const journal =
    options.journal ??
    (readsGroupJournal &&
    (options.store.journalIndex!.groupsByDefault || options.transport.journal.scansSharedLog === true)
      ? 'group'
      : 'per-run');
  const logger = options.logger ?? silentLogger;
  const fleetJournalCheckMs = positive('fleetJournalCheckMs', options.fleetJournalCheckMs ?? 10_000);
  const journalGate =
    options.journal === undefined && journal === 'group'
      ? new FleetJournalGate(options.store.fleet, fleetJournalCheckMs, logger)
      : undefined;
  const journalReads: JournalReadTap = { record: () => undefined };
  return {
    transport: journalTransport(options.transport, options.store, journal, journalGate, journalReads),
    journalReads,
    journal,
    readsGroupJournal,
    journalGate,
    fleetJournalCheckMs,
    store: options.store,
    workflows,
    concurrency: positiveInt('concurrency', options.concurrency ?? 100),
    leaseMs,
    heartbeatMs,
    reapIntervalMs: positive('reapIntervalMs', options.reapIntervalMs ?? Math.min(1_000, leaseMs / 2)),
    deadWorkerScanMs: nonNegative('deadWorkerScanMs', options.deadWorkerScanMs ?? 150),
    missingVersionGraceMs: nonNegative('missingVersionGraceMs', options.missingVersionGraceMs ?? 60_000),
    retentionMs: nonNegative('retentionMs', options.retentionMs ?? 0),
    retentionSweepMs: positive(
      'retentionSweepMs',
      options.retentionSweepMs ?? Math.min(60_000, options.retentionMs || 60_000),
    ),
    retentionTombstoneMs: positive(
      'retentionTombstoneMs',
      options.retentionTombstoneMs ?? (options.retentionMs || 60_000),
    ),
    groupLogTrimMs: nonNegative('groupLogTrimMs', options.groupLogTrimMs ?? 60_000),
    scheduleScanMs: nonNegative('scheduleScanMs', options.scheduleScanMs ?? 1_000),
    checkpointEvery: positiveInt('checkpointEvery', options.checkpointEvery ?? 100),
    historyLimits: resolveHistoryLimits(options),
    memoryBudget: resolveMemoryBudget(options),
    pipelineSteps: options.pipelineSteps === true,
    maxMessageBytes: positiveInt('maxMessageBytes', options.maxMessageBytes ?? 1024 * 1024),
    maxDeliveries: positiveInt('maxDeliveries', options.maxDeliveries ?? 20),
    drainTimeoutMs: nonNegative('drainTimeoutMs', options.drainTimeoutMs ?? 10_000),
    departedRetentionMs: Math.round(
      nonNegative('departedRetentionMs', options.departedRetentionMs ?? 3_600_000),
    ),
    inProcessWaitMs: nonNegative('inProcessWaitMs', options.inProcessWaitMs ?? 1_000),
    fetchWaitMs: positive('fetchWaitMs', options.fetchWaitMs ?? 1_000),
    workerId,
    logger,
    onEvent: options.onEvent ?? (() => undefined),
    faults: options.faults,
    payloadProtection,
    claimCheck: resolveClaimCheck(options.largePayloads, options.store.payloads, payloadProtection.codec)!,
    unreadableRetryMs: positive('unreadableRetryMs', options.unreadableRetryMs ?? 60_000),
    maxResumeFailures: positiveInt('maxResumeFailures', options.maxResumeFailures ?? 5),
    resumeBackoffMs,
    resumeBackoffMaxMs,
    clock: resolveClock(options.clock),
  };
}

/** The history limits: whole numbers, 0 for off, defaults from core (DEFAULT_HISTORY_LIMITS). */
function resolveHistoryLimits(options: WorkerOptions): HistoryLimits {
  const limit = (name: string, value: number): number => {
    if (!Number.isInteger(value) || value < 0) {
      const expected = 'must be zero (off) or a positive whole number';
      throw invalidOption(
        { option: name, value: String(value), expected: `it ${expected}` },
        `${name} ${expected}, got ${String(value)}`,
      );
    }
    return value;
  };
  const d = DEFAULT_HISTORY_LIMITS;
  return {
    softEntries: limit('historySoftEntries', options.historySoftEntries ?? d.softEntries),
    softBytes: limit('historySoftBytes', options.historySoftBytes ?? d.softBytes),
    maxEntries: limit('historyMaxEntries', options.historyMaxEntries ?? d.maxEntries),
    maxBytes: limit('historyMaxBytes', options.historyMaxBytes ?? d.maxBytes),
  };
}

function resolveMemoryBudget(options: WorkerOptions): MemoryBudgetSettings {
  const budgetBytes = options.memoryBudgetBytes ?? defaultMemoryBudgetBytes();
  if (!Number.isInteger(budgetBytes) || budgetBytes < 0) {
    const expected = 'must be zero (off) or a positive whole number of bytes';
    throw invalidOption(
      { option: 'memoryBudgetBytes', value: String(budgetBytes), expected: `it ${expected}` },
      `memoryBudgetBytes ${expected}, got ${String(budgetBytes)}`,
    );
  }
  const resumeBytes = options.memoryResumeBytes ?? Math.floor(budgetBytes * DEFAULT_RESUME_SHARE);
  if (budgetBytes > 0 && !(Number.isInteger(resumeBytes) && resumeBytes > 0 && resumeBytes < budgetBytes)) {
    const expected = `must be a positive whole number of bytes below memoryBudgetBytes (${budgetBytes})`;
    throw invalidOption(
      {
        option: 'memoryResumeBytes',
        value: String(resumeBytes),
        expected: `it ${expected}`,
        related: ['memoryBudgetBytes'],
      },
      `memoryResumeBytes ${expected}, got ${String(resumeBytes)}`,
    );
  }
  const heapUsed = options.heapUsed ?? v8HeapUsed;
  if (typeof heapUsed !== 'function') {
    throw invalidOption(
      { option: 'heapUsed', value: typeof heapUsed, expected: 'it must be a function returning bytes' },
      `heapUsed must be a function returning bytes, got ${typeof heapUsed}`,
    );
  }
  const liveHeap = options.liveHeap ?? gcLiveHeap(heapUsed);
  return { budgetBytes, resumeBytes, heapUsed, liveHeap };
}

function resolveClock(clock: (() => number) | undefined): () => number {
  if (clock === undefined) return Date.now;
  if (typeof clock !== 'function') {
    throw invalidOption(
      {
        option: 'clock',
        value: typeof clock,
        expected: 'it must be a function returning ms since the epoch',
      },
      `clock must be a function returning ms since the epoch, got ${typeof clock}`,
    );
  }
  return clock;
}

/** A resolved protection is taken as it is; options are resolved without the environment. */
function resolveProtection(
  given: PayloadProtection | PayloadProtectionOptions | undefined,
): PayloadProtection {
  if (given !== undefined && 'codec' in given) return given;
  return resolvePayloadProtection(given ?? {}, {});
}

function positive(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    const expected = 'must be a positive number of milliseconds';
    throw invalidOption(
      { option: name, value: String(value), expected: `it ${expected}` },
      `${name} ${expected}, got ${String(value)}`,
    );
  }
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
    const expected = 'must be zero or a positive number';
    throw invalidOption(
      { option: name, value: String(value), expected: `it ${expected}` },
      `${name} ${expected}, got ${String(value)}`,
    );
  }
  return value;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw invalidOption(
      { option: name, value: String(value), expected: 'it must be a positive integer' },
      `${name} must be a positive integer, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The workflows with each definition once. The same definition object listed twice is one
 * workflow; two different definitions of one name@version are refused, naming both places: only
 * one of them could run, and which one would depend on the order of the list.
 */
function distinctWorkflows(
  workflows: ReadonlyArray<AnyWorkflowDefinition>,
): ReadonlyArray<AnyWorkflowDefinition> {
  const seen = new Map<string, { definition: AnyWorkflowDefinition; index: number }>();
  workflows.forEach((definition, index) => {
    const key = workflowKey(definition.name, definition.version);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, { definition, index });
      return;
    }
    if (first.definition === definition) return;
    throw new ConfigError(
      `workflow ${key} has two different definitions, at workflows[${first.index}] and workflows[${index}]; ` +
        'a name@version must have exactly one: remove one, or give the changed one a new version',
    );
  });
  return workflows.length === seen.size ? workflows : [...seen.values()].map((s) => s.definition);
}

/** Bytes journal reads fetched from the bus go to `record`, which the Worker points at its metric. */
export interface JournalReadTap {
  record: (bytes: number) => void;
}

/** How a workflow version is named in registries and messages: `name@version`. */
export function workflowKey(name: string, version: number): string {
  return `${name}@${version}`;
}

/**
 * The transport the worker journals through: with group logs on the bus and a journal index in the
 * store, a group journal in `mode` (which also resumes runs of the other kind); else the bus's own
 * journal, and `group` is refused naming what is missing.
 */
function journalTransport(
  transport: Transport,
  store: Store,
  mode: JournalMode,
  gate: FleetJournalGate | undefined,
  reads: JournalReadTap,
): Transport {
  if (mode !== 'group' && mode !== 'per-run') {
    throw invalidOption(
      { option: 'journal', value: String(mode), expected: "it must be 'group' or 'per-run'" },
      `journal must be 'group' or 'per-run', got '${String(mode)}'`,
    );
  }
  if (supportsGroupJournal(transport, store)) {
    // A log of this process's own: a restarted worker never appends to its previous life's log.
    return withGroupJournal(transport, store, {
      mode,
      log: `w${randomBytes(8).toString('hex')}`,
      onBusRead: (bytes) => reads.record(bytes),
      ...(gate !== undefined && { groupNewRuns: () => gate.open }),
    });
  }
  if (mode === 'group') {
    const expected =
      `it needs a bus with group logs and a store with a journal index; ${transport.name} ` +
      `${transport.groupLog ? 'has them' : 'has no group logs'} and ${store.name} ` +
      `${store.journalIndex ? 'has one' : 'has no journal index'} (group commit is built for NATS or Kafka ` +
      "with Redis or Postgres so far): use journal 'per-run'";
    throw invalidOption(
      { option: 'journal', value: 'group', expected },
      `journal 'group' ${expected.slice('it '.length)}`,
    );
  }
  return transport;
}
