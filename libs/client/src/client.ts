/**
 * The client: what producers and operators use. Starting, signalling and cancelling need only the
 * transport (they are messages on the run queue, applied by workers); reading a run's state needs
 * the store, its history the transport's journal.
 */
import {
  assertRunId,
  CancelledError,
  ConfigError,
  decodeJournalRecord,
  encodeMessage,
  newRunId,
  NotFoundError,
  resolvePayloadProtection,
  runIdForKey,
  TimeoutError,
  WorkflowFailedError,
  type LeaseInfo,
  type PayloadCodec,
  type PayloadProtection,
  type PayloadProtectionOptions,
  type PositionedEntry,
  type RunRecord,
  type Store,
  type Transport,
} from '@baton/core';
import { ATTR, withEnqueueSpan } from '@baton/telemetry';
import { randomUUID } from 'node:crypto';

export interface ClientOptions {
  transport: Transport;
  /** Needed for result() and describe(); a pure producer can leave it out. */
  store?: Store;
  /** First poll interval of result(); it doubles up to 250 ms. @defaultValue 5 */
  pollIntervalMs?: number;
  /**
   * The payload protection the workers use (docs/integrity.md), so history() can decrypt and
   * decompress journal records: a resolved protection, or its options (the environment is not
   * read; pass `resolvePayloadProtection({}, process.env)` for the BATON_* variables).
   * @defaultValue nothing: plain records are read; an encrypted one raises an error naming its key
   */
  payloadProtection?: PayloadProtection | PayloadProtectionOptions;
}

export interface StartOptions {
  /** Use this run id (letters, digits, '_' and '-'). */
  runId?: string;
  /** The same key (for the same workflow) always yields the same run; a second start is a no-op. */
  idempotencyKey?: string;
  /** W3C traceparent of the caller, carried to every attempt. */
  traceparent?: string;
}

export interface WorkflowRef {
  name: string;
  version: number;
}

export interface RunDescription extends RunRecord {
  lease: LeaseInfo | undefined;
}

/** A handle on one run. */
export class RunHandle<O = unknown> {
  constructor(
    private readonly client: Client,
    readonly runId: string,
  ) {}

  /** Waits for the outcome: the result, or WorkflowFailedError / CancelledError / TimeoutError. */
  result(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<O> {
    return this.client.result(this.runId, options) as Promise<O>;
  }

  describe(): Promise<RunDescription> {
    return this.client.describe(this.runId);
  }
}

export class Client {
  private readonly transport: Transport;
  private readonly store: Store | undefined;
  private readonly pollIntervalMs: number;
  private readonly codec: PayloadCodec;
  private connecting: Promise<void> | undefined;

  constructor(options: ClientOptions) {
    if (!options?.transport)
      throw new ConfigError('Client needs a transport: pass `transport` (e.g. memoryTransport())');
    this.transport = options.transport;
    this.store = options.store;
    this.pollIntervalMs = options.pollIntervalMs ?? 5;
    const protection = options.payloadProtection;
    this.codec = (
      protection !== undefined && 'codec' in protection
        ? protection
        : resolvePayloadProtection(protection ?? {}, {})
    ).codec;
  }

  /** Connects the adapters; called by every method, so calling it yourself is optional. */
  connect(): Promise<void> {
    this.connecting ??= Promise.all([this.transport.connect(), this.store?.connect()]).then(() => undefined);
    return this.connecting;
  }

  /** Enqueues a run and returns its handle (before any worker has picked it up). */
  async start<I, O>(
    workflow: WorkflowRef & { run?: unknown },
    input: I,
    options: StartOptions = {},
  ): Promise<RunHandle<O>> {
    if (!workflow || typeof workflow.name !== 'string' || !Number.isInteger(workflow.version)) {
      throw new ConfigError('client.start needs a workflow definition or { name, version }');
    }
    const runId =
      options.runId ??
      (options.idempotencyKey !== undefined
        ? runIdForKey(workflow.name, options.idempotencyKey)
        : newRunId());
    assertRunId(runId);
    await this.connect();
    const attributes = {
      [ATTR.workflow]: workflow.name,
      [ATTR.workflowVersion]: workflow.version,
      [ATTR.runId]: runId,
    };
    await withEnqueueSpan(attributes, async (spanTraceparent) => {
      // An explicit traceparent wins; otherwise the enqueue span's own (absent when tracing is off).
      const traceparent = options.traceparent ?? spanTraceparent;
      const message = encodeMessage({
        kind: 'start',
        runId,
        workflow: workflow.name,
        version: workflow.version,
        input,
        ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
        enqueuedAt: Date.now(),
      });
      await this.transport.enqueue(message, { msgId: `start:${runId}`, key: runId });
    });
    return new RunHandle<O>(this, runId);
  }

  handle<O = unknown>(runId: string): RunHandle<O> {
    assertRunId(runId);
    return new RunHandle<O>(this, runId);
  }

  /** Delivers a signal; a run waiting in `ctx.waitForSignal(name)` receives `payload`. */
  async signal(
    runId: string,
    name: string,
    payload?: unknown,
    options: { signalId?: string } = {},
  ): Promise<void> {
    assertRunId(runId);
    await this.connect();
    const signalId = options.signalId ?? randomUUID();
    await this.transport.enqueue(encodeMessage({ kind: 'signal', runId, name, payload, signalId }), {
      msgId: `signal:${runId}:${signalId}`,
      key: runId,
    });
  }

  /** Requests cancellation: the run stops at its next ctx call and ends `cancelled`. */
  async cancel(runId: string, reason = 'cancelled by client'): Promise<void> {
    assertRunId(runId);
    await this.connect();
    await this.transport.enqueue(encodeMessage({ kind: 'cancel', runId, reason }), { key: runId });
  }

  /** The run record and its lease. NotFoundError while no worker has taken its start message. */
  async describe(runId: string): Promise<RunDescription> {
    const store = this.requireStore('describe');
    await this.connect();
    const run = await store.getRun(runId);
    if (!run)
      throw new NotFoundError(`run ${runId} is not known to the store (not started, or not yet picked up)`);
    return { ...run, lease: await store.getLease(runId) };
  }

  /**
   * The run's journal, decoded (decrypted and decompressed with the client's payload protection),
   * in order, zombie writes included. Entries keep their hash-chain links (`prev`) when the chain
   * is on. CheckpointIntegrityError names the record that does not decode.
   */
  async history(runId: string): Promise<PositionedEntry[]> {
    await this.connect();
    const records = await this.transport.read(runId, 0);
    return records.flatMap((r) =>
      decodeJournalRecord(r.data, runId, this.codec, r.position).map((entry) => ({
        position: r.position,
        entry,
      })),
    );
  }

  /** Waits for the run to finish (polling the store with backoff). */
  async result(runId: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<unknown> {
    const store = this.requireStore('result');
    await this.connect();
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let interval = this.pollIntervalMs;
    for (;;) {
      options.signal?.throwIfAborted();
      const run = await store.getRun(runId);
      if (run?.status === 'completed') return run.result;
      if (run?.status === 'failed')
        throw new WorkflowFailedError(runId, run.error ?? { name: 'Error', message: 'unknown' });
      if (run?.status === 'cancelled') throw new CancelledError(runId, run.error?.message);
      if (Date.now() >= deadline) {
        throw new TimeoutError(
          `run ${runId} did not finish within ${options.timeoutMs} ms (status: ${run?.status ?? 'not started'})`,
        );
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(interval, Math.max(0, deadline - Date.now()))),
      );
      interval = Math.min(interval * 2, 250);
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
