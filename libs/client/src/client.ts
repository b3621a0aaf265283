/**
 * The client: what producers and operators use. Starting, signalling and cancelling need only the
 * transport (they are messages on the run queue, applied by workers); reading a run's state, and
 * pausing and resuming it, need the store, its history the transport's journal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatonError,
  CONTINUED_AS,
  isContinuedAsNew,
  CancelledError,
  CheckpointIntegrityError,
  ConfigError,
  NotFoundError,
  RunDeletedError,
  RunLostError,
  RunStateError,
  TimeoutError,
  WorkflowFailedError,
  type SignalDefinition,
  type AnyWorkflowDefinition,
  type WorkflowDefinition,
  type WorkflowOutput,
  type ChainResult,
  CHILD_START_DEAD_LETTERED,
  childKeyPrefix,
  parentOfKey,
} from '@baton/core';
import {
  assertRunId,
  type CheckpointSummary,
  type PayloadStore,
  type LeaseInfo,
  type RecordedDataLoss,
  type RunRecord,
  type Store,
  type Transport,
} from '@baton/core/adapter';
import {
  checkRunPriority,
  decodeJournalRecord,
  deleteFinishedRun,
  cancelMessage,
  newRunId,
  openResult,
  openValue,
  resolvePayloadProtection,
  resumeMessage,
  runIdForKey,
  sealValue,
  sendRunMessage,
  signalMessage,
  startMessage,
  wakeMessage,
  resolveClaimCheck,
  type ClaimCheck,
  type JournalEntry,
  type LargePayloadOptions,
  type OutgoingRunMessage,
  type PayloadRef,
  type PayloadCodec,
  type PayloadProtection,
  type PayloadProtectionOptions,
  type PositionedEntry,
  type RunDeletion,
  type RunPriority,
  signalName,
  supportsGroupJournal,
  withGroupJournal,
} from '@baton/core/runtime';
import { ATTR, withEnqueueSpan } from '@baton/telemetry';
import { randomUUID } from 'node:crypto';
import { FleetProtectionCheck } from './fleet-protection.js';
import { openedError, openedRecord } from './sealed-records.js';
import { forkEntries, readHistoryAt, retryEntries, sealCheckpoint, type ForkPoint } from './time-travel.js';
import { checkStartFields, validatedInput, validatedSignalPayload } from './validate-input.js';
import { DeadLettersApi, RunQueriesApi } from './operations.js';
import { replayCheck, type ReplayCheckOptions, type ReplayCheckReport } from './replay-check.js';
import { BulkApi } from './bulk.js';
import { buildTimeline, type RunTimeline } from './timeline.js';
import { FleetApi } from './fleet.js';
import { SchedulesApi } from './schedules.js';
import { DEFAULT_RETRY_UNAVAILABLE_MS, retryUnavailable } from './retry-unavailable.js';

export interface ClientOptions {
  transport: Transport;
  /** Needed for result() and describe(); a pure producer can leave it out. */
  store?: Store;
  /** First poll interval of result(); it doubles up to 250 ms. @defaultValue 5 */
  pollIntervalMs?: number;
  /** The default of result()'s `unknownRunMs` (see {@link ResultOptions}). @defaultValue 30_000 */
  unknownRunMs?: number;
  /**
   * The payload protection the workers use (docs/integrity.md), so history() can decrypt and
   * decompress journal records: a resolved protection, or its options (the environment is not
   * read; pass `resolvePayloadProtection({}, process.env)` for the BATON_* variables).
   * @defaultValue nothing: plain records are read; an encrypted one raises an error naming its key
   */
  payloadProtection?: PayloadProtection | PayloadProtectionOptions;
  /**
   * Large payloads by reference (docs/large-payloads.md): a run input or signal payload whose JSON
   * is above `thresholdBytes` is stored in `payloads` (default: the client's store) and the
   * message carries its SHA-256 reference; history() reads references back. Use the workers'
   * settings. A client with neither a store nor `payloads` sends every value inline.
   * @defaultValue `{ thresholdBytes: 65536, payloads: store }`
   */
  largePayloads?: LargePayloadOptions;
  /**
   * How long start, signal, cancel, pause and resume try again, with backoff and jitter, when the
   * bus or the store answers with a retryable error (a NATS or Kafka leader election, a Redis
   * failover, a reconnect): each attempt sends the same message, so a retry never starts a run
   * twice. Past it: RetriesExhaustedError, naming the call, the attempts and the last error. 0
   * makes one attempt and throws its error as it is.
   * @defaultValue 30_000
   */
  retryUnavailableMs?: number;
}

export interface StartOptions {
  /** Use this run id (letters, digits, '_' and '-'). */
  runId?: string;
  /** The same key (for the same workflow) always yields the same run; a second start is a no-op. */
  idempotencyKey?: string;
  /** W3C traceparent of the caller, carried to every attempt. */
  traceparent?: string;
  /**
   * Which lane of the run queue the start waits in: a worker with a choice claims `'high'` runs
   * first, yet still claims `'normal'` and `'low'` ones (2 and 1 in every 8 claims under a steady
   * high load; docs/priorities.md). Only the first claim is prioritised: the run's later messages
   * (wakes, resumes, signals) go in the default lane. Not journaled: it never changes what the run
   * does. Anything else than the three levels is refused with a ConfigError, nothing sent.
   * @defaultValue 'normal'
   */
  priority?: RunPriority;
}

/** Options of {@link Client.fork}: exactly one of `fromCheckpoint` and `fromJournalPosition`. */
export interface ForkOptions extends ForkPoint {
  /** The new run's id. @defaultValue a new random id */
  runId?: string;
}

/**
 * A workflow named without its code, for producers that do not import it: input and result are
 * `unknown` unless given as type arguments (`client.start<Input, Output>(ref, input)`).
 */
export interface WorkflowRef {
  name: string;
  version: number;
}

/**
 * A {@link WorkflowRef} that is not a definition: a definition passed here would skip the check
 * of its input type, so definitions only match `start`'s typed overload.
 */
export type UntypedWorkflowRef = WorkflowRef & { readonly run?: never; readonly kind?: never };

export interface RunDescription extends RunRecord {
  lease: LeaseInfo | undefined;
  /** Set for a child workflow (`ctx.startChild`): the parent run and the step that started it. */
  parent?: { runId: string; seq: number };
}

/** Options of {@link Client.result}. */
export interface ResultOptions {
  /** Give up with TimeoutError after this long. @defaultValue no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * How long a run the store does not know (no record, no tombstone) is waited for before
   * NotFoundError: its start message may still be queued, or it was never started. A run the
   * retention sweep deleted fails at once with RunDeletedError instead, while its tombstone lives.
   * @defaultValue the client's `unknownRunMs` (30 s) for `client.result(runId)`; the timeout for
   * the handle `start()` returned
   */
  unknownRunMs?: number;
  /**
   * When the run's start was sent (ms since the epoch). A data loss the store recorded after it
   * (Store.lastDataLoss) means the run most likely went with the data: an unknown run is then
   * waited for no longer than the client's `unknownRunMs` (its start may still be queued), and
   * fails with RunLostError. The handle `start()` returned sets it.
   */
  startedAt?: number;
}

/** How long client.result(runId) waits for a run the store does not know. */
const UNKNOWN_RUN_MS = 30_000;

/** A handle on one run; `O` is its workflow's result type. */
export class RunHandle<O = unknown> {
  constructor(
    private readonly client: Client,
    readonly runId: string,
    /** When this client sent the run's start (ms since the epoch), when it did. */
    readonly startedAt?: number,
  ) {}

  /**
   * Waits for the outcome: the result, or WorkflowFailedError / CancelledError / TimeoutError /
   * RunDeletedError / RunLostError. This client sent the run's start, so a run the store does not
   * know yet is waited for until the timeout (its start message may sit in a long queue), unless
   * the store lost it: it was seen and is gone, or the store recorded a data loss after the start.
   */
  result(options?: ResultOptions): Promise<O> {
    return this.client.result(this.runId, {
      unknownRunMs: Infinity,
      ...(this.startedAt !== undefined && { startedAt: this.startedAt }),
      ...options,
    }) as Promise<O>;
  }

  describe(): Promise<RunDescription> {
    return this.client.describe(this.runId);
  }

  /** {@link Client.pause} of this run. */
  pause(reason?: string): Promise<'paused' | 'pause-requested'> {
    return this.client.pause(this.runId, reason);
  }

  /** {@link Client.resume} of this run. */
  resume(): Promise<boolean> {
    return this.client.resume(this.runId);
  }

  /** {@link Client.fork} of this run: a run of the same workflow, so a handle of the same type. */
  fork(options: ForkOptions): Promise<RunHandle<O>> {
    return this.client.fork<O>(this.runId, options);
  }

  /** {@link Client.retry} of this run. */
  retry(): Promise<RunHandle<O>> {
    return this.client.retry<O>(this.runId);
  }
}

export class Client {
  private readonly transport: Transport;
  private readonly store: Store | undefined;
  /** Runs as an operator finds them: `list(query)` by filter in pages, `count()` by status. */
  readonly runs: RunQueriesApi;
  /** The transport's dead letters: `list`, `show`, `redrive`, `purge`. */
  readonly deadLetters: DeadLettersApi;
  /** Bulk actions by run filter (`count`, `run`) and dead-letter redrive (`redriveDeadLetters`). */
  readonly bulk: BulkApi;
  /** The fleet: `workers()` (live workers and what they carry) and `backlog()` (the run queue's). */
  readonly fleet: FleetApi;
  /** Schedules: `create`, `update`, `pause`, `resume`, `delete`, `get`, `list`, `upcoming` (docs/schedules.md). */
  readonly schedules: SchedulesApi;
  private readonly pollIntervalMs: number;
  private readonly unknownRunMs: number;
  private readonly retryUnavailableMs: number;
  private readonly codec: PayloadCodec;
  private readonly protection: PayloadProtection;
  private readonly claimCheck: ClaimCheck | undefined;
  /** Refuses a start or signal the live workers could not read (fleet-protection.ts). */
  private readonly fleetProtection: FleetProtectionCheck;
  private connecting: Promise<void> | undefined;

  constructor(options: ClientOptions) {
    if (!options?.transport)
      throw new ConfigError('Client needs a transport: pass `transport` (e.g. memoryTransport())');
    // Reads see grouped runs too (group commit across runs): their journals are pointers in the store.
    this.transport =
      options.store !== undefined && supportsGroupJournal(options.transport, options.store)
        ? withGroupJournal(options.transport, options.store, { mode: 'per-run', log: 'client' })
        : options.transport;
    this.store = options.store;
    this.runs = new RunQueriesApi((method) => this.requireStore(method));
    this.deadLetters = new DeadLettersApi(this.transport);
    this.bulk = new BulkApi(this);
    this.fleet = new FleetApi(
      (method) => this.requireStore(method),
      this.transport,
      () => this.connect(),
    );
    this.schedules = new SchedulesApi(
      (method) => this.requireStore(method),
      () => this.connect(),
      () => this.protection,
    );
    this.pollIntervalMs = options.pollIntervalMs ?? 5;
    this.unknownRunMs = options.unknownRunMs ?? UNKNOWN_RUN_MS;
    if (!(this.unknownRunMs >= 0))
      throw new ConfigError(`Client option unknownRunMs is ${this.unknownRunMs}; it must be 0 or more ms`);
    this.retryUnavailableMs = options.retryUnavailableMs ?? DEFAULT_RETRY_UNAVAILABLE_MS;
    if (!(this.retryUnavailableMs >= 0))
      throw new ConfigError(
        `Client option retryUnavailableMs is ${this.retryUnavailableMs}; it must be 0 or more ms`,
      );
    const protection = options.payloadProtection;
    this.protection =
      protection !== undefined && 'codec' in protection
        ? protection
        : resolvePayloadProtection(protection ?? {}, {});
    this.codec = this.protection.codec;
    this.claimCheck = resolveClaimCheck(options.largePayloads, options.store, this.codec);
    this.fleetProtection = new FleetProtectionCheck(options.store, this.protection);
  }

  /** Connects the adapters; called by every method, so calling it yourself is optional. */
  connect(): Promise<void> {
    const payloads = this.claimCheck?.payloads;
    const separate = payloads !== this.store && payloads !== undefined && 'connect' in payloads;
    this.connecting ??= Promise.all([
      this.transport.connect(),
      this.store?.connect(),
      separate ? (payloads as PayloadStore & { connect(): Promise<void> }).connect() : undefined,
    ]).then(() => undefined);
    return this.connecting;
  }

  /**
   * Enqueues a run and returns its handle (before any worker has picked it up). Given a
   * definition, `input` must have the workflow's input type and the handle's `result()` has its
   * output type; a definition with an input schema validates `input` first (InvalidInputError,
   * nothing sent) and sends the schema's output value.
   */
  start<I, O, StartInput = I>(
    workflow: WorkflowDefinition<I, O, StartInput>,
    input: NoInfer<StartInput>,
    options?: StartOptions,
  ): Promise<RunHandle<ChainResult<O>>>;
  /** Enqueues a run of a workflow named by `{ name, version }`, typed by the type arguments. */
  start<I = unknown, O = unknown>(
    workflow: UntypedWorkflowRef,
    input: I,
    options?: StartOptions,
  ): Promise<RunHandle<O>>;
  async start(
    workflow: WorkflowRef & { input?: unknown },
    input: unknown,
    options: StartOptions = {},
  ): Promise<RunHandle<unknown>> {
    if (!workflow || typeof workflow.name !== 'string' || !Number.isInteger(workflow.version)) {
      throw new ConfigError('client.start needs a workflow definition or { name, version }');
    }
    checkStartFields(workflow, options);
    const priority = checkRunPriority(options.priority, 'client.start');
    // Before the run id, the connection and the payload store: a refused input leaves no trace.
    const value = await validatedInput(workflow, input);
    const runId =
      options.runId ??
      (options.idempotencyKey !== undefined
        ? runIdForKey(workflow.name, options.idempotencyKey)
        : newRunId());
    assertRunId(runId);
    await this.connect();
    await this.fleetProtection.check(`client.start(${workflow.name}@${workflow.version})`);
    const startedAt = Date.now();
    const attributes = {
      [ATTR.workflow]: workflow.name,
      [ATTR.workflowVersion]: workflow.version,
      [ATTR.runId]: runId,
    };
    await withEnqueueSpan(attributes, async (spanTraceparent) => {
      // An explicit traceparent wins; otherwise the enqueue span's own (absent when tracing is off).
      const traceparent = options.traceparent ?? spanTraceparent;
      const message = startMessage({
        runId,
        workflow: workflow.name,
        version: workflow.version,
        ...(await this.inlineOrRef(
          runId,
          value,
          'input',
          `input of run ${runId} (workflow ${workflow.name}@${workflow.version})`,
        )),
        ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
        ...(priority !== undefined ? { priority } : {}),
      });
      await this.send(`client.start(run ${runId})`, message);
    });
    return new RunHandle(this, runId, startedAt);
  }

  /**
   * A handle on a run started elsewhere. Given the run's workflow definition, `result()` has its
   * output type; the definition is only a type here (the run's workflow is not checked).
   */
  handle<W extends AnyWorkflowDefinition>(runId: string, workflow: W): RunHandle<WorkflowOutput<W>>;
  handle<O = unknown>(runId: string): RunHandle<O>;
  handle(runId: string): RunHandle<unknown> {
    assertRunId(runId);
    return new RunHandle(this, runId);
  }

  /**
   * Delivers a signal; a run waiting in `ctx.waitForSignal(signal)` receives `payload`. Given a
   * definition (`defineSignal<T>(name)`, recommended), `payload` must be a `T`; a plain name
   * takes any payload. A definition with a schema (`defineSignal(name, { schema })`) validates
   * `payload` first (InvalidInputError naming the signal and each issue, nothing sent) and sends
   * the schema's output. A signal for a run that has already finished (completed, failed or
   * cancelled) is dropped by the worker that takes it: not kept, counted in
   * `baton_signals_dropped_total`, logged at debug level.
   */
  signal<T, In = T>(
    runId: string,
    signal: SignalDefinition<T, In>,
    payload: NoInfer<In>,
    options?: { signalId?: string },
  ): Promise<void>;
  signal(runId: string, name: string, payload?: unknown, options?: { signalId?: string }): Promise<void>;
  async signal(
    runId: string,
    signal: string | SignalDefinition<unknown, unknown>,
    payload?: unknown,
    options: { signalId?: string } = {},
  ): Promise<void> {
    const name = signalName(signal);
    assertRunId(runId);
    // Before the connection and the payload store: a refused payload leaves no trace.
    const checked = await validatedSignalPayload(signal, runId, payload);
    await this.connect();
    await this.fleetProtection.check(`client.signal(run ${runId}, '${name}')`);
    const signalId = options.signalId ?? randomUUID();
    const value = await this.inlineOrRef(
      runId,
      checked,
      'payload',
      `payload of signal '${name}' to run ${runId}`,
    );
    await this.send(
      `client.signal(run ${runId}, '${name}')`,
      signalMessage({ runId, name, ...value, signalId }),
    );
  }

  /**
   * Requests cancellation: the run stops at its next ctx call (an activity in flight sees its
   * `signal` abort) and ends `cancelled`.
   *
   * When is it too late (docs/operations.md, "When a cancel is accepted")? A cancel is *accepted*
   * once the store has recorded it; an accepted cancel always ends the run `cancelled`, even when
   * its last step is finishing, unless its workflow code catches the CancelledError and chooses
   * its own end. One that reaches the store after the run's owner began to record its end
   * changes nothing. With a store, this call records the cancel itself and resolves once it is
   * accepted (or found too late); its owner hears of it at once. Without one (a producer with only
   * the bus), or for a run the store does not know yet (its start still on the bus), it resolves
   * once the bus holds the cancel message, and the cancel is accepted when a worker takes it. A
   * cancel of a run that continued as new goes on to the run it continued as.
   */
  async cancel(runId: string, reason = 'cancelled by client'): Promise<void> {
    assertRunId(runId);
    await this.connect();
    if (this.store !== undefined) {
      const store = this.store;
      const answer = await this.retrying(`client.cancel(run ${runId})`, () =>
        store.requestCancel(runId, reason),
      );
      if (answer.found && answer.tooLate !== true) {
        // A suspended or paused run is acquirable now: wake it, as a worker would.
        if (answer.wake) await this.send(`client.cancel(run ${runId})`, wakeMessage(runId, 'cancel'));
        return;
      }
      // Unknown yet (its start is still on the bus), or too late: the message below goes to a
      // worker, which retries the first and passes the second on to the run a continued run went
      // on as (so a cancel that crossed a continue-as-new reaches the chain's current run).
    }
    await this.send(`client.cancel(run ${runId})`, cancelMessage(runId, reason));
  }

  /**
   * Pauses a run (docs/operations.md, "Pausing and resuming a run"). A run no worker is running
   * (pending, suspended, between owners) is `paused` at once: `'paused'`. A run a worker is
   * running is asked to stop: it finishes the activities in flight, journals their results, starts
   * nothing new, and pauses at its next step (within a lease heartbeat): `'pause-requested'`
   * (`describe()` shows `lease.pauseRequested` until then). Should that worker die first, the run
   * is paused instead of resumed elsewhere. A paused run is run by no worker, reaper or timer
   * until {@link resume}; signals sent to it are kept. Pausing a paused run changes nothing.
   *
   * Needs the store. NotFoundError for a run the store does not know; RunStateError (naming the
   * status) for a finished run, and for a run whose cancel is pending (a cancel wins).
   */
  async pause(runId: string, reason?: string): Promise<'paused' | 'pause-requested'> {
    const store = this.requireStore('pause');
    assertRunId(runId);
    await this.connect();
    const answer = await this.retrying(`client.pause(run ${runId})`, () => store.requestPause(runId, reason));
    if (!answer.found)
      throw new NotFoundError(
        `client.pause(${runId}): run ${runId} is not known to the store (not started yet?)`,
      );
    if (answer.state === 'paused' || answer.state === 'pause-requested') return answer.state;
    const status = (await store.getRun(runId))?.status ?? answer.state;
    throw new RunStateError(
      runId,
      status,
      answer.state === 'finished'
        ? `client.pause(${runId}): run ${runId} is ${status}: a finished run cannot be paused`
        : `client.pause(${runId}): run ${runId} has a cancel pending, and a cancel wins over a pause; ` +
            'it ends cancelled',
    );
  }

  /**
   * Resumes a paused run: any worker claims it at once and it goes on from its last journaled
   * step (a sleep that came due while paused wakes it at once). For a run whose pause was requested
   * but not reached yet, withdraws the request. Resolves true when it did either, false when the
   * run was neither paused nor asked to pause (nothing changed).
   *
   * Needs the store. NotFoundError for a run the store does not know; RunStateError for a finished run.
   */
  async resume(runId: string): Promise<boolean> {
    const store = this.requireStore('resume');
    assertRunId(runId);
    await this.connect();
    const answer = await this.retrying(`client.resume(run ${runId})`, () => store.resumeRun(runId));
    if (!answer.found)
      throw new NotFoundError(`client.resume(${runId}): run ${runId} is not known to the store`);
    // Lost, the wake is replaced by the reaper's: the resumed lease is in its queue.
    if (answer.wake) await this.send(`client.resume(run ${runId})`, wakeMessage(runId, 'resume'));
    if (answer.resumed) return true;
    const lease = await store.getLease(runId);
    if (lease?.state === 'finished') {
      const status = (await store.getRun(runId))?.status ?? 'finished';
      throw new RunStateError(
        runId,
        status,
        `client.resume(${runId}): run ${runId} is ${status}: a finished run cannot be resumed ` +
          '(client.retry redrives a failed one)',
      );
    }
    return false;
  }

  /** The run record and its lease. NotFoundError while no worker has taken its start message. */
  async describe(runId: string): Promise<RunDescription> {
    const store = this.requireStore('describe');
    await this.connect();
    const run = await store.getRun(runId);
    if (!run) throw await this.notKnown(store, runId, '');
    const parent = parentOfKey(run.idempotencyKey);
    const opened = openedRecord(run, this.protection);
    return { ...opened, lease: await store.getLease(runId), ...(parent && { parent }) };
  }

  /**
   * The child workflows run `runId` started (`ctx.startChild`), oldest first, at most `limit`: the
   * runs whose idempotency key names it as their parent (core's child-workflows.ts, invariant 6).
   * A child whose start is still queued is not listed yet.
   */
  async children(runId: string, limit = 100): Promise<RunRecord[]> {
    const store = this.requireStore('children');
    await this.connect();
    const page = await store.listRuns({
      idempotencyKeyPrefix: childKeyPrefix(runId),
      order: 'oldest',
      limit,
    });
    return page.runs.filter((run) => parentOfKey(run.idempotencyKey)?.runId === runId);
  }

  /**
   * The run's journal, decoded (decrypted and decompressed with the client's payload protection),
   * in order, zombie writes included. Entries keep their hash-chain links (`prev`) when the chain
   * is on. CheckpointIntegrityError names the record that does not decode.
   */
  async history(runId: string): Promise<PositionedEntry[]> {
    await this.connect();
    const records = await this.transport.journal.read(runId, 0);
    const positioned: PositionedEntry[] = [];
    for (const r of records) {
      const decoded = decodeJournalRecord(r.data, runId, this.codec, r.position);
      for (const entry of await this.resolved(runId, decoded))
        positioned.push({ position: r.position, entry });
    }
    return positioned;
  }

  /**
   * Every kept checkpoint of the run, oldest first: seq, epoch, journal position, status, schema
   * version, time and encoded size. NotFoundError when the store does not know the run.
   */
  async checkpoints(runId: string): Promise<CheckpointSummary[]> {
    const store = this.requireStore('checkpoints');
    await this.connect();
    await this.requireRun(store, runId, 'checkpoints');
    return store.listCheckpoints(runId);
  }

  /**
   * The run's timeline (see {@link RunTimeline}): its activities with attempts, durations,
   * idempotency keys, worker and epoch; its signals, timers, checkpoints, lease changes and
   * failovers, in journal order. NotFoundError when the store does not know the run.
   */
  async timeline(runId: string): Promise<RunTimeline> {
    const checkpoints = await this.checkpoints(runId);
    return buildTimeline(runId, await this.history(runId), checkpoints);
  }

  /**
   * Starts a new run of the same workflow version and input whose history is this run's up to a
   * kept checkpoint or a journal position: the steps before that point replay from it and are not
   * executed again, the steps after it execute. The original run is only read. The new run's
   * first checkpoint (seq 1, epoch 0) holds the prefix (docs/time-travel.md).
   */
  async fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>> {
    const store = this.requireStore('fork');
    const { fromCheckpoint, fromJournalPosition } = options ?? {};
    if ((fromCheckpoint === undefined) === (fromJournalPosition === undefined)) {
      throw new ConfigError(
        `client.fork(${runId}) needs exactly one of fromCheckpoint (a checkpoint seq, see client.checkpoints) ` +
          'and fromJournalPosition (a journal position, see client.history)',
      );
    }
    const point = fromCheckpoint ?? fromJournalPosition!;
    if (!Number.isSafeInteger(point) || point < 0) {
      const name = fromCheckpoint !== undefined ? 'fromCheckpoint' : 'fromJournalPosition';
      throw new ConfigError(
        `client.fork(${runId}): ${name} must be a whole number ≥ 0, got ${String(point)}`,
      );
    }
    const newId = options.runId ?? newRunId();
    assertRunId(newId);
    if (newId === runId) throw new ConfigError(`client.fork(${runId}): the fork needs a run id of its own`);
    await this.connect();
    await this.fleetProtection.check(`client.fork(${runId})`);
    const original = await this.requireRun(store, runId, 'fork');
    const history = await readHistoryAt(
      store,
      this.transport,
      runId,
      { fromCheckpoint, fromJournalPosition },
      this.protection,
    );
    const prefix = forkEntries(history.entries);
    // The fork keeps the original's references and gets its own copies of the bytes: retention
    // deletes payloads with their run. Copied before the run exists, so no worker misses one.
    await this.claimCheck?.copyPayloads(runId, newId, prefix);
    const checkpoint = sealCheckpoint(
      {
        runId: newId,
        seq: 1,
        // Below the first owner's epoch (1): the seed is never fenced and never confused with its writes.
        epoch: 0,
        // The new run's own journal is empty; its first owner reads all of it.
        journalPosition: 0,
        entries: prefix,
        status: 'running',
      },
      this.protection,
    );
    // The input is sealed for the original run: opened (MissingKeyError naming the key when this
    // client lacks it) and sealed again for the fork.
    const input = openValue(original.input, runId, 'run input', this.protection);
    const { created } = await store.createRun({
      runId: newId,
      workflow: original.workflow,
      version: original.version,
      input: sealValue(input, newId, 'run input', this.protection),
      idempotencyKey: null,
      checkpoint,
      forkedFrom: {
        runId,
        ...(fromCheckpoint !== undefined
          ? { checkpoint: fromCheckpoint }
          : { journalPosition: fromJournalPosition }),
      },
    });
    if (!created)
      throw new ConfigError(`client.fork(${runId}): run ${newId} already exists; pick another runId`);
    // The record exists, so the worker that takes this message finds it (not fresh) and replays the seed.
    await sendRunMessage(
      this.transport.runQueue,
      startMessage({
        runId: newId,
        workflow: original.workflow,
        version: original.version,
        ...(await this.inlineOrRef(newId, input, 'input', `input of run ${newId} (fork of ${runId})`)),
      }),
    );
    return new RunHandle<O>(this, newId);
  }

  /**
   * Redrives a failed run from its last checkpoint and journal: its outcome and the activity
   * failures it ended on are dropped, so those steps run again; every step that succeeded is
   * replayed, not executed. RunStateError unless the run is `failed`; of concurrent retries one
   * resumes the run and the others get RunStateError (status `pending` or `running`).
   */
  async retry<O = unknown>(runId: string): Promise<RunHandle<O>> {
    const store = this.requireStore('retry');
    await this.connect();
    const run = await this.requireRun(store, runId, 'retry');
    const notFailed = (status: string): RunStateError =>
      new RunStateError(
        runId,
        status,
        `client.retry(${runId}): only a failed run can be retried, and this one is ${status}` +
          (status === 'pending' || status === 'running' ? ' (already retried, or still under way)' : ''),
      );
    if (run.status !== 'failed') throw notFailed(run.status);
    if (run.error?.code === CHILD_START_DEAD_LETTERED) {
      // Reopened, it would run with whatever input its record kept (none, for an unreadable
      // start), for a parent that has already taken its failure.
      throw new RunStateError(
        runId,
        run.status,
        `client.retry(${runId}): this child never ran: ${run.error.message}. It has no history to ` +
          'retry and its parent was told it failed; after the fix, start the parent anew for a new child',
      );
    }
    const lease = await store.getLease(runId);
    const history = await readHistoryAt(store, this.transport, runId, 'end', this.protection);
    const checkpoint = sealCheckpoint(
      {
        runId,
        // Above every seq the run has, even one that no longer reads (the base may be older then).
        seq: Math.max(history.checkpointSeq ?? 0, history.lastSeq) + 1,
        // The finished lease's epoch: reopenRun accepts it only while the lease is still there.
        epoch: lease?.epoch ?? 0,
        journalPosition: history.journalPosition,
        entries: retryEntries(history.entries),
        status: 'running',
      },
      this.protection,
    );
    const reopened = await store.reopenRun(runId, checkpoint);
    if (!reopened.reopened) {
      const now = await store.getRun(runId);
      throw notFailed(now?.status ?? reopened.status ?? 'unknown');
    }
    // Lost, the message is replaced by the reaper's: the reopened lease is in its queue.
    await sendRunMessage(this.transport.runQueue, resumeMessage(runId, 'retry'));
    return new RunHandle<O>(this, runId);
  }

  /**
   * Deletes a finished run for good: its store data (record, checkpoints, lease, signals, and its
   * idempotency key, so a later start with that key creates a new run), then its journal: purged
   * on NATS and in memory; on Kafka kept until the journal topic's `retention.ms`
   * (`journal: 'retention'`, docs/retention.md). RunStateError naming the status unless the run
   * is completed, failed or cancelled; NotFoundError when the store does not know it.
   */
  async delete(runId: string): Promise<RunDeletion> {
    const store = this.requireStore('delete');
    assertRunId(runId);
    await this.connect();
    const deleted = await deleteFinishedRun(store, this.transport, runId, this.claimCheck?.payloads);
    if (deleted === undefined)
      throw new NotFoundError(`client.delete(${runId}): run ${runId} is not known to the store`);
    return deleted;
  }

  /**
   * Replays the journals of the runs `options.filter` selects (by default every run in flight:
   * pending, running, suspended) against `options.workflows`, the NEW workflow code, and says per
   * run whether a worker on that code could resume it: `ok` (and where the replay ended),
   * `nondeterministic` (the step, what the journal recorded and what the code asked for; a worker
   * would fail the run with NonDeterminismError there), `failed` (the new code throws during the
   * replay), `skipped` (its workflow name@version is not in the new code) or `error` (its history
   * could not be read: unreadable checkpoint, missing key, failed read). Runs are read and
   * replayed as a worker resumes them, with this client's payload protection; nothing is written
   * anywhere and no activity code runs (docs/versioning.md, "Check before you roll out").
   * ConfigError for two different definitions of one name@version or a bad `maxRuns`.
   */
  async replayCheck(options: ReplayCheckOptions): Promise<ReplayCheckReport> {
    const store = this.requireStore('replayCheck');
    await this.connect();
    return replayCheck(
      { store, transport: this.transport, protection: this.protection, claimCheck: this.claimCheck },
      options,
    );
  }

  /**
   * Waits for the run to finish (polling the store with backoff). A run the retention sweep
   * deleted fails at once with RunDeletedError (its tombstone says so); a run the store does not
   * know at all fails with NotFoundError once it stayed unknown for `unknownRunMs`. A run that
   * continued as new (`ctx.continueAsNew`) is followed to its successor, and so on: the result is
   * the chain's last run's, and the timeout counts for the whole chain.
   */
  async result(runId: string, options: ResultOptions = {}): Promise<unknown> {
    const store = this.requireStore('result');
    await this.connect();
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    const unknownRunMs = options.unknownRunMs ?? this.unknownRunMs;
    let unknownDeadline = Date.now() + unknownRunMs;
    let interval = this.pollIntervalMs;
    let current = runId;
    /** The status the current run was last seen with: a run seen and then gone was lost. */
    let seen: string | undefined;
    /** Whether a recorded data loss was looked for, for the current run; the loss after its start. */
    let lossRead = false;
    let lostWith: RecordedDataLoss | undefined;
    /** Since when the store's reads fail with a retryable error (undefined while they work). */
    let failingSince: number | undefined;
    for (;;) {
      options.signal?.throwIfAborted();
      let run: RunRecord | undefined;
      try {
        run = await store.getRun(current);
        failingSince = undefined;
      } catch (err) {
        // A store that is briefly away (a restart, a failover) is waited out for as long as the
        // client retries its other calls (retryUnavailableMs).
        if (!(err instanceof BatonError && err.retryable)) throw err;
        failingSince ??= Date.now();
        const outage = Date.now() - failingSince;
        if (outage >= this.retryUnavailableMs || Date.now() >= deadline) throw err;
        await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
        continue;
      }
      if (run?.status === 'completed') {
        // A sealed result opens with the client's keys; without the key it names, MissingKeyError.
        if (!isContinuedAsNew(run.result)) return openResult(run.result, current, this.protection);
        // The run continued as new: wait for its successor (started before this run was recorded
        // as ended), and so on to the chain's last run.
        current = run.result[CONTINUED_AS].runId;
        unknownDeadline = Date.now() + unknownRunMs;
        interval = this.pollIntervalMs;
        seen = undefined;
        lossRead = false;
        continue;
      }
      if (run !== undefined) seen = run.status;
      // Without the key a sealed error keeps its name and code, and says "protected (key k1)".
      const error = run === undefined ? undefined : openedError(run, this.protection);
      if (run?.status === 'failed')
        throw new WorkflowFailedError(current, error ?? { name: 'Error', message: 'unknown' });
      if (run?.status === 'cancelled') throw new CancelledError(current, error?.message);
      if (run === undefined) {
        const tombstone = await store.runTombstone(current);
        if (tombstone !== undefined) throw new RunDeletedError(current, tombstone.deletedAt);
        if (seen !== undefined) {
          throw await this.notKnown(store, current, '', `it was ${seen} when last read, and then gone`);
        }
        if (!lossRead && current === runId && options.startedAt !== undefined) {
          // A loss after the start was sent: the run most likely went with it, unless its start
          // still waits in the queue. Wait the client's unknownRunMs for that, not for ever.
          lossRead = true;
          const loss = await store.lastDataLoss?.().catch(() => undefined);
          if (loss !== undefined && loss.at >= options.startedAt) {
            lostWith = loss;
            unknownDeadline = Math.min(unknownDeadline, Date.now() + this.unknownRunMs);
          }
        }
        if (lostWith !== undefined && Date.now() >= unknownDeadline) {
          const sent = new Date(options.startedAt!).toISOString();
          throw new RunLostError(
            current,
            `its start was sent at ${sent}, before the loss, and no worker recorded it in the ${this.unknownRunMs} ms since`,
            lostWith,
          );
        }
        if (Date.now() >= unknownDeadline && unknownDeadline < deadline) {
          throw new NotFoundError(
            `run ${current} is not known to the store after ${unknownRunMs} ms: it was never started, ` +
              'was deleted (client.delete, or retention longer ago than the tombstones live), or its ' +
              'start message still waits in the queue; pass { unknownRunMs } to wait longer',
          );
        }
      }
      if (Date.now() >= deadline) {
        throw new TimeoutError(
          `run ${current} did not finish within ${options.timeoutMs} ms (status: ${run?.status ?? 'not started'})`,
        );
      }
      const until = Math.min(deadline, run === undefined ? unknownDeadline : Infinity);
      await sleep(Math.min(interval, Math.max(0, until - Date.now())));
      interval = Math.min(interval * 2, 250);
    }
  }

  /**
   * Entries with their large values read back from the payload store, verified, as the workers
   * read them. A run deleted from the store (retention, delete) whose journal the bus still keeps
   * (Kafka until `retention.ms`) has no payloads left: its entries keep their references.
   */
  /** `attempt`, tried again through a briefly unavailable bus or store (retry-unavailable.ts). */
  private retrying<T>(operation: string, attempt: () => Promise<T>): Promise<T> {
    return retryUnavailable(operation, this.retryUnavailableMs, attempt);
  }

  /** Sends `message`, built once, so every attempt is the same message (retry-unavailable.ts, 2). */
  private send(operation: string, message: OutgoingRunMessage): Promise<void> {
    return this.retrying(operation, () => sendRunMessage(this.transport.runQueue, message));
  }

  private async resolved(runId: string, entries: JournalEntry[]): Promise<JournalEntry[]> {
    if (this.claimCheck === undefined) return entries;
    try {
      return await this.claimCheck.resolveEntries(runId, entries);
    } catch (err) {
      const deleted =
        err instanceof CheckpointIntegrityError &&
        this.store !== undefined &&
        !(await this.store.getRun(runId));
      if (deleted) return entries;
      throw err;
    }
  }

  /**
   * `{ [field]: value }`, or `{ [field]Ref: reference }` once a large value is stored. A value with
   * no JSON form raises UnencodableValueError naming `what` (here, or in encodeMessage without a
   * claim check), before anything is stored or sent.
   */
  private async inlineOrRef<F extends 'input' | 'payload'>(
    runId: string,
    value: unknown,
    field: F,
    what: string,
  ): Promise<{ [K in F]?: unknown } & { [K in `${F}Ref`]?: PayloadRef }> {
    const ref = await this.claimCheck?.offloadValue(runId, value, what);
    // Inline values are sealed when the client encrypts (docs/integrity.md); a reference's bytes
    // already went through the codec.
    const purpose = field === 'input' ? 'run input' : 'signal payload';
    const inline = () => sealValue(value, runId, purpose, this.protection, what);
    return (ref === undefined ? { [field]: inline() } : { [`${field}Ref`]: ref }) as {
      [K in F]?: unknown;
    } & { [K in `${F}Ref`]?: PayloadRef };
  }

  private async requireRun(store: Store, runId: string, method: string): Promise<RunRecord> {
    assertRunId(runId);
    const run = await store.getRun(runId);
    if (!run) throw await this.notKnown(store, runId, `client.${method}(${runId}): `);
    return run;
  }

  /**
   * The error for a run the store does not know: RunLostError when something shows it existed
   * (`evidence` from the caller, or its journal on a bus whose per-run read is cheap), else
   * NotFoundError, which names a data loss the store recorded since a run started before it is
   * gone too. A run the retention sweep deleted (its tombstone lives) is plainly not found.
   */
  private async notKnown(
    store: Store,
    runId: string,
    context: string,
    evidence?: string,
  ): Promise<NotFoundError> {
    const plain = `${context}run ${runId} is not known to the store (not started, or not yet picked up)`;
    if ((await store.runTombstone(runId)) !== undefined) return new NotFoundError(`${plain}: it was deleted`);
    const loss = await store.lastDataLoss?.().catch(() => undefined);
    if (evidence !== undefined) return new RunLostError(runId, evidence, loss);
    const records = await this.journalRecords(runId);
    if (records > 0)
      return new RunLostError(runId, `its journal on the bus holds ${records} record(s)`, loss);
    if (loss === undefined) return new NotFoundError(plain);
    return new NotFoundError(
      `${plain}; note that the store lost its data at ${new Date(loss.at).toISOString()} (${loss.reason}): ` +
        'a run started before then is gone from it; start it again from its producer with the same idempotency key',
    );
  }

  /**
   * How many journal records the bus holds for the run on its own subject or stream; 0 on a bus
   * where that read scans a log every run shares (Kafka), and when the read fails (this is only
   * evidence for an error message). Runs journaled through group records have none of their own.
   */
  private async journalRecords(runId: string): Promise<number> {
    if (this.transport.journal.scansSharedLog === true) return 0;
    try {
      return (await this.transport.journal.read(runId, 0)).length;
    } catch {
      return 0;
    }
  }

  private requireStore(method: string): Store {
    if (!this.store) {
      throw new ConfigError(
        `client.${method}() reads the store: create the Client with { transport, store }`,
      );
    }
    return this.store;
  }
}
