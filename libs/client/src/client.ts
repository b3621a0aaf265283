/**
 * The client: a root with a producer's calls, over sub-clients with an operator's. Starting,
 * signalling and cancelling need only the transport (they are messages on the run queue, applied
 * by workers); waiting for a result and describing a run need the store, its history the
 * transport's journal. Each sub-client is built here with what it uses, never the client itself;
 * the wait for a result is in result-wait.ts.
 */
import { readStream, streamNames, type StreamDeps, type StreamReadOptions } from './streams.js';
import type { StreamItem } from '@baton/core';
import {
  BatonError,
  ConfigError,
  InvalidInputError,
  type QueryDefinition,
  type SignalDefinition,
  type UpdateDefinition,
  type AnyWorkflowDefinition,
  type WorkflowDefinition,
  type WorkflowOutput,
  type ChainResult,
} from '@baton/core';
import { assertRunId, type PayloadStore, type Store, type Transport } from '@baton/core/adapter';
import {
  checkRunPriority,
  cancelMessage,
  newRunId,
  resolvePayloadProtection,
  runIdForKey,
  signalMessage,
  startMessage,
  wakeMessage,
  resolveClaimCheck,
  type ClaimCheck,
  type LargePayloadOptions,
  type PayloadProtection,
  type PayloadProtectionOptions,
  type PositionedEntry,
  type RunPriority,
  signalName,
  startFieldProblem,
  supportsGroupJournal,
  withGroupJournal,
  parentOfKey,
} from '@baton/core/runtime';
import { ATTR, withEnqueueSpan } from '@baton/telemetry';
import { randomUUID } from 'node:crypto';
import { BulkApi } from './bulk.js';
import { DeadLettersApi } from './dead-letters.js';
import { FleetApi } from './fleet.js';
import { FleetProtectionCheck } from './fleet-protection.js';
import { HistoryReader } from './history.js';
import { Outbox } from './outbox.js';
import { DEFAULT_RETRY_UNAVAILABLE_MS } from './retry-unavailable.js';
import { RunHandle, type ResultOptions, type RunDescription } from './run-handle.js';
import { notKnownError } from './run-lookup.js';
import { RunsApi } from './runs.js';
import { SchedulesApi } from './schedules.js';
import { openedRecord } from './sealed-records.js';
import { PromisesApi } from './promises.js';
import { askQuery, listQueryNames, type QueryArguments, type QueryCallOptions } from './queries.js';
import { TimeTravelApi } from './time-travel.js';
import { waitForResult, type ResultTiming } from './result-wait.js';
import { callUpdate, type UpdateOptions } from './update-call.js';
import {
  checkStartFields,
  validatedInput,
  validatedSignalPayload,
  type UntypedWorkflowRef,
  type WorkflowRef,
} from './validate-input.js';

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

/** How long client.result(runId) waits for a run the store does not know. */
const UNKNOWN_RUN_MS = 30_000;

/**
 * The client. Its own calls are a producer's: start a run and wait for its result, name a run
 * started elsewhere, signal or cancel it, describe it and read its history. What an operator does
 * is grouped in sub-clients: `runs`, `timeTravel`, `deadLetters`, `bulk`, `fleet`, `schedules`,
 * `promises`.
 */
export class Client {
  private readonly transport: Transport;
  private readonly store: Store | undefined;
  /**
   * Runs as an operator finds and steers them: `list`, `all`, `count`, `children`, `timeline`,
   * `pause`, `resume`, `delete`.
   */
  readonly runs: RunsApi;
  /** A run's past: `checkpoints`, and a run started again from it, `fork` and `retry` (docs/time-travel.md). */
  readonly timeTravel: TimeTravelApi;
  /** The transport's dead letters: `list`, `show`, `redrive`, `purge`. */
  readonly deadLetters: DeadLettersApi;
  /** Bulk actions by run filter (`count`, `run`) and dead-letter redrive (`redriveDeadLetters`). */
  readonly bulk: BulkApi;
  /**
   * The fleet: `workers()` and `backlog()`, and a rollout's questions: `versions()`, `drained()`,
   * `replayCheck()` (docs/versioning.md).
   */
  readonly fleet: FleetApi;
  /** Schedules: `create`, `update`, `pause`, `resume`, `delete`, `get`, `list`, `upcoming` (docs/schedules.md). */
  readonly schedules: SchedulesApi;
  /**
   * Durable promises (docs/promises.md): `resolve` and `reject` one by its token, as any system
   * holding the token does; `get` one, and list a run's `pending` ones with their tokens (an
   * operator's view: tokens are secrets).
   */
  readonly promises: PromisesApi;
  /** How `result` polls and how long it waits for an unknown run or an unavailable store. */
  private readonly resultTiming: ResultTiming;
  private readonly protection: PayloadProtection;
  private readonly claimCheck: ClaimCheck | undefined;
  private readonly outbox: Outbox;
  private readonly journal: HistoryReader;
  /** Refuses a start or signal the live workers could not read (fleet-protection.ts). */
  private readonly fleetProtection: FleetProtectionCheck;
  private connecting: Promise<void> | undefined;
  /** The adapters as they were given (the transport before any group-journal wrapper), for close(). */
  private readonly given: { transport: Transport; store: Store | undefined };
  private closing: Promise<void> | undefined;

  constructor(options: ClientOptions) {
    if (!options?.transport)
      throw new ConfigError('Client needs a transport: pass `transport` (e.g. memoryTransport())');
    // Reads see grouped runs too (group commit across runs): their journals are pointers in the store.
    const transport = (this.transport =
      options.store !== undefined && supportsGroupJournal(options.transport, options.store)
        ? withGroupJournal(options.transport, options.store, { mode: 'per-run', log: 'client' })
        : options.transport);
    this.store = options.store;
    this.given = { transport: options.transport, store: options.store };
    const unknownRunMs = options.unknownRunMs ?? UNKNOWN_RUN_MS;
    if (!(unknownRunMs >= 0))
      throw new ConfigError(`Client option unknownRunMs is ${unknownRunMs}; it must be 0 or more ms`);
    const retryUnavailableMs = options.retryUnavailableMs ?? DEFAULT_RETRY_UNAVAILABLE_MS;
    if (!(retryUnavailableMs >= 0))
      throw new ConfigError(
        `Client option retryUnavailableMs is ${retryUnavailableMs}; it must be 0 or more ms`,
      );
    this.resultTiming = { pollIntervalMs: options.pollIntervalMs ?? 5, unknownRunMs, retryUnavailableMs };
    const given = options.payloadProtection;
    const protection = (this.protection =
      given !== undefined && 'codec' in given ? given : resolvePayloadProtection(given ?? {}, {}));
    const claimCheck = (this.claimCheck = resolveClaimCheck(
      options.largePayloads,
      options.store?.payloads,
      protection.codec,
    ));
    this.fleetProtection = new FleetProtectionCheck(options.store?.fleet, protection);
    this.outbox = new Outbox(transport, protection, claimCheck, retryUnavailableMs);
    this.journal = new HistoryReader(transport, protection.codec, claimCheck, options.store);

    // Each sub-client gets what it uses: the store (a ConfigError naming the call without one),
    // the transport, the shared connection, and the client's payload settings.
    const store = (method: string) => this.requireStore(method);
    const connect = () => this.connect();
    this.runs = new RunsApi(store, transport, connect, this.outbox, this.journal, claimCheck?.payloads);
    this.timeTravel = new TimeTravelApi(
      store,
      transport,
      connect,
      protection,
      claimCheck,
      this.outbox,
      this.fleetProtection,
      (runId) => new RunHandle(this, runId),
    );
    this.deadLetters = new DeadLettersApi(transport);
    this.bulk = new BulkApi({
      runs: this.runs,
      deadLetters: this.deadLetters,
      timeTravel: this.timeTravel,
      cancel: (runId, reason) => this.cancel(runId, reason),
    });
    this.fleet = new FleetApi(store, transport, connect, protection, claimCheck);
    this.schedules = new SchedulesApi(store, connect, () => protection);
    this.promises = new PromisesApi(store, connect, this.outbox, () => protection, this.fleetProtection);
  }

  /** Connects the adapters; called by every method, so calling it yourself is optional. */
  connect(): Promise<void> {
    if (this.closing !== undefined)
      return Promise.reject(
        new BatonError('BATON_CLOSED', 'client: called after close(); build a new Client to go on'),
      );
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
   * Closes what the client was given: the transport, the store and a payload store of its own
   * (`largePayloads.payloads`), all of them even when one fails (then it rejects with the first
   * failure). Call it when the process is done with the client. Safe to call again: it resolves as
   * the first call did. Afterwards every call rejects with BATON_CLOSED. A Worker in the same
   * process that shares the adapters is stopped first (`worker.stop()` leaves them open for this).
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const payloads = this.claimCheck?.payloads;
      const separate =
        payloads !== undefined && payloads !== this.given.store?.payloads && 'close' in payloads;
      const closed = await Promise.allSettled([
        this.given.transport.close(),
        this.given.store?.close(),
        separate ? (payloads as PayloadStore & { close(): Promise<void> }).close() : undefined,
      ]);
      const failed = closed.find((c): c is PromiseRejectedResult => c.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    })();
    return this.closing;
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
        ...(await this.outbox.inlineOrRef(
          runId,
          value,
          'input',
          `input of run ${runId} (workflow ${workflow.name}@${workflow.version})`,
        )),
        ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
        ...(priority !== undefined ? { priority } : {}),
      });
      await this.outbox.send(`client.start(run ${runId})`, message);
    });
    return new RunHandle(this, runId, startedAt);
  }

  /**
   * The run id `start(workflow, input, { idempotencyKey })` gives a run (without `runId`): the
   * same workflow name and key always name the same run, so a caller can ask the store whether
   * that run exists before it starts one (the HTTP API answers a repeated key 200 instead of 201
   * this way). No I/O. InvalidInputError naming the field for a workflow name or a key a worker
   * would refuse.
   */
  runIdForKey(workflow: string | WorkflowRef, idempotencyKey: string): string {
    const name = typeof workflow === 'string' ? workflow : workflow.name;
    const refused = startFieldProblem({ workflow: name, version: 1, idempotencyKey });
    if (refused !== undefined) {
      throw new InvalidInputError(name, [`${refused.field} ${refused.problem}`], {
        field: refused.field === 'workflow' ? 'workflow' : 'idempotencyKey',
        message: `client.runIdForKey(${String(name)}): ${refused.field} ${refused.problem}`,
      });
    }
    return runIdForKey(name, idempotencyKey);
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
    const value = await this.outbox.inlineOrRef(
      runId,
      checked,
      'payload',
      `payload of signal '${name}' to run ${runId}`,
    );
    await this.outbox.send(
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
      const answer = await this.outbox.retrying(`client.cancel(run ${runId})`, () =>
        store.control.requestCancel(runId, reason),
      );
      if (answer.found && answer.tooLate !== true) {
        // A suspended or paused run is acquirable now: wake it, as a worker would.
        if (answer.wake) await this.outbox.send(`client.cancel(run ${runId})`, wakeMessage(runId, 'cancel'));
        return;
      }
      // Unknown yet (its start is still on the bus), or too late: the message below goes to a
      // worker, which retries the first and passes the second on to the run a continued run went
      // on as (so a cancel that crossed a continue-as-new reaches the chain's current run).
    }
    await this.outbox.send(`client.cancel(run ${runId})`, cancelMessage(runId, reason));
  }

  /**
   * Sends an update to a running run and returns its handler's result (docs/updates.md): the
   * workflow answers it with the handler it registered (`ctx.onUpdate(update, handler)`). Given a
   * definition (`defineUpdate<Args, Result>(name)`), `args` must be its `Args` and the answer is its
   * `Result`; a plain name takes any arguments. The arguments are checked here against the
   * update's schema (InvalidInputError, nothing sent) and validator (UpdateRejectedError), then by
   * the run's worker again, with the workflow's own validator, before anything is journaled. Then:
   * UpdateRejectedError (refused, or no handler of that name: code BATON_UPDATE_UNKNOWN),
   * UpdateFailedError (the handler threw), RunStateError (the run has finished, or ended before it
   * handled the update), NotFoundError (an unknown run), UpdateTimeoutError (no answer within
   * `timeoutMs`, 60 s by default: the update still applies once, and a call with the same
   * `updateId` answers its result). Needs the store.
   */
  update<Args, Result>(
    runId: string,
    update: UpdateDefinition<Args, Result>,
    args: NoInfer<Args>,
    options?: UpdateOptions,
  ): Promise<Result>;
  update<Result = unknown>(
    runId: string,
    name: string,
    args?: unknown,
    options?: UpdateOptions,
  ): Promise<Result>;
  async update(
    runId: string,
    update: string | UpdateDefinition<unknown, unknown>,
    args?: unknown,
    options: UpdateOptions = {},
  ): Promise<unknown> {
    assertRunId(runId);
    const store = this.requireStore('update');
    await this.connect();
    return callUpdate(
      {
        store,
        outbox: this.outbox,
        protection: this.protection,
        pollIntervalMs: this.resultTiming.pollIntervalMs,
      },
      runId,
      update,
      args,
      options,
    );
  }

  /**
   * Asks the run's query `query` (`ctx.onQuery(query, handler)` in its workflow) and resolves to the
   * handler's answer, without changing the run (docs/queries.md). The worker that holds the run
   * answers from its state in memory; a run nobody holds (suspended, paused, finished, or held by a
   * worker that does not answer in time) is answered by a worker that registers its workflow
   * version, by replaying its journal without running or writing anything. Given a definition
   * (`defineQuery<Result, Args>(name)`), `args` must be an `Args` and the answer is a `Result`.
   * Raises UnknownQueryError (no handler of that name: it names those the run registers),
   * QueryFailedError (the handler threw, or called a ctx method: a handler only reads),
   * QueryTimeoutError (no worker answered within `timeoutMs`, 10 s by default) and NotFoundError
   * for a run the store does not know. Needs the store.
   */
  query<Result, Args>(
    runId: string,
    query: QueryDefinition<Result, Args>,
    ...rest: QueryArguments<Args>
  ): Promise<Result>;
  query<Result = unknown>(
    runId: string,
    name: string,
    args?: unknown,
    options?: QueryCallOptions,
  ): Promise<Result>;
  async query(
    runId: string,
    query: string | QueryDefinition<unknown, never>,
    args?: unknown,
    options?: QueryCallOptions,
  ): Promise<unknown> {
    const store = this.requireStore('query');
    await this.connect();
    return askQuery(
      { store, transport: this.transport, protection: this.protection },
      runId,
      query,
      args,
      options,
    );
  }

  /**
   * The query names the run registers (`ctx.onQuery`) where its code has reached, sorted: asked
   * the way a query is (its holder, else a replay), so it costs what a query costs. QueryTimeoutError
   * when no worker answers within `timeoutMs`.
   */
  async queryNames(runId: string, options?: QueryCallOptions): Promise<string[]> {
    const store = this.requireStore('queryNames');
    await this.connect();
    return listQueryNames({ store, transport: this.transport, protection: this.protection }, runId, options);
  }

  /** The run record and its lease. NotFoundError while no worker has taken its start message. */
  async describe(runId: string): Promise<RunDescription> {
    const store = this.requireStore('describe');
    await this.connect();
    const run = await store.runs.get(runId);
    if (!run) throw await notKnownError(store, this.transport, runId, '');
    const parent = parentOfKey(run.idempotencyKey);
    const opened = openedRecord(run, this.protection);
    return { ...opened, lease: await store.leases.get(runId), ...(parent && { parent }) };
  }

  /**
   * The run's journal, decoded (decrypted and decompressed with the client's payload protection),
   * in order, zombie writes included. Entries keep their hash-chain links (`prev`) when the chain
   * is on. CheckpointIntegrityError names the record that does not decode.
   */
  async history(runId: string): Promise<PositionedEntry[]> {
    await this.connect();
    return this.journal.read(runId);
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
    return waitForResult(
      { store, transport: this.transport, protection: this.protection, ...this.resultTiming },
      runId,
      options,
    );
  }

  /**
   * Follows the run stream `name` (docs/streams.md): an async iterator of its items, each with its
   * sequence number, from `options.from` (default 1). It waits for items while the run goes on and
   * ends after the stream's close, or once the run has finished and everything it wrote was read,
   * or when `options.signal` aborts. Each sequence number comes once; to resume after a
   * disconnect, pass the last one seen plus one. A run just started is waited for, as `result()`
   * waits, for up to the client's `unknownRunMs`. Chunks are decrypted with the client's payload
   * protection.
   *
   * @example
   * for await (const item of client.stream<string>(runId, 'tokens')) {
   *   if (item.kind === 'chunk') process.stdout.write(item.value);
   * }
   */
  stream<T = unknown>(
    runId: string,
    name: string,
    options?: StreamReadOptions,
  ): AsyncIterable<StreamItem<T>> {
    const store = this.requireStore('stream');
    return readStream<T>(this.streamDeps(store), runId, name, options);
  }

  /** The names of the run's streams, in the order they were first written (docs/streams.md). */
  streamNames(runId: string): Promise<string[]> {
    const store = this.requireStore('streamNames');
    return streamNames(this.streamDeps(store), runId);
  }

  private streamDeps(store: Store): StreamDeps {
    return {
      transport: this.transport,
      store,
      codec: this.protection.codec,
      unknownRunMs: this.resultTiming.unknownRunMs,
      connect: () => this.connect(),
    };
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
