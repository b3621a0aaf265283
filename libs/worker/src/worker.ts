/**
 * The Worker: claims runs from the transport's run queue and executes them (DESIGN §3).
 *
 * Lifecycle states:
 * - `created`: constructed, options validated, nothing running;
 * - `running`: claiming messages, renewing leases, reaping;
 * - `draining`: stop() was called: no new claims; owned runs are being handed off;
 * - `stopped`: everything released; the worker cannot be started again.
 *
 * Invariants:
 * 1. A run message is acked only after the run's lease is held (or the message proved useless:
 *    the run is finished or owned by a live worker), so a crash between the two loses nothing.
 * 2. A message the worker cannot process is dead-lettered with a reason, then acked; it never
 *    stops the claim loop.
 * 3. At most `concurrency` runs execute at once; the worker fetches only what it has room for.
 * 4. A run whose workflow version this worker does not register is never failed nor dead-lettered
 *    for that: its message is put back for a worker that has the version (docs/versioning.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError, type AnyWorkflowDefinition } from '@baton/core';
import { hasPresence, type AcquireResult, type Delivery, type RunRecord } from '@baton/core/adapter';
import { encodeMessage, type ResumeMessage, type WakeMessage, type RunMessage } from '@baton/core/runtime';
import {
  ATTR,
  observeBacklog,
  recordError,
  workerInstruments,
  type WorkerInstruments,
} from '@baton/telemetry';
import { SpanStatusCode } from '@opentelemetry/api';
import { LeaseKeeper } from './lease-keeper.js';
import { Maintenance } from './maintenance.js';
import {
  resolveWorkerOptions,
  workflowKey,
  type ResolvedWorkerOptions,
  type WorkerOptions,
} from './options.js';
import {
  DEAD_LETTER_CODES,
  deadLetterDelivery,
  messageValue,
  parseRunMessage,
  PoisonMessage,
  runIdOf,
} from './poison.js';
import { PutBack } from './put-back.js';
import { RunSession, type SessionEnd } from './run-session.js';
import {
  announceClaim,
  runEventContext,
  sessionEndEvent,
  type RunEventContext,
  type WorkerEvent,
} from './events.js';
import { handleClaimFailure } from './claim-failures.js';
import { enqueueResume, enqueueWake, redeliveryDelayMs } from './run-messages.js';
import { StoreClock } from './store-clock.js';
import { bindLogger } from './logger.js';
import { DataLossWatch, type DataLossReport } from './data-loss.js';

export type WorkerState = 'created' | 'running' | 'draining' | 'stopped';

/** What health and readiness checks need to know, from `Worker.health()`. */
export interface WorkerHealth {
  state: WorkerState;
  /** Runs executing now. */
  runsInFlight: number;
  /** Leases the lease keeper renews. */
  leasesHeld: number;
  /** Local time the lease keeper last finished a renewal round, successful or not. */
  lastRenewalPassAt: number;
  /** Local time of the last successful renewal round (or of start, before the first). */
  lastRenewalOkAt: number;
  /** The last renewal round could not reach the store. */
  storeFailing: boolean;
  /** The last fetch from the run queue failed. */
  transportFailing: boolean;
  /** Store clock minus this worker's clock (ms), as last measured; null before start. */
  storeClockOffsetMs?: number | null;
  /** The last time the store was found to have lost its data, and the runs this worker lost; null if never. */
  storeDataLoss?: DataLossReport | null;
}

/** Every reason a run is claimed again (resume and wake messages): the resumed counter's labels. */
const RESUME_REASONS: readonly (ResumeMessage['reason'] | WakeMessage['reason'])[] = [
  'handoff',
  'reaped',
  'retry',
  'timer',
  'signal',
  'cancel',
];

const FETCH_BATCH = 64;
/**
 * How long one backlog reading may take at metrics collection: a scrape must not wait on a slow
 * bus, and a reading that misses is left out of that scrape rather than delaying it.
 */
const BACKLOG_READ_TIMEOUT_MS = 1_000;
const ERROR_BACKOFF_MS = 500;

export class Worker {
  readonly options: ResolvedWorkerOptions;
  private stateValue: WorkerState = 'created';
  private readonly registry = new Map<string, AnyWorkflowDefinition>();
  private readonly sessions = new Map<string, RunSession>();
  private readonly handling = new Set<Promise<void>>();
  private readonly keeper: LeaseKeeper;
  private readonly maintenance: Maintenance;
  private readonly fetchAbort = new AbortController();
  private claimLoop: Promise<void> = Promise.resolve();
  private slots = 0;
  private slotFreed: (() => void) | undefined;
  private stopping: Promise<void> | undefined;
  private fetchFailing = false;
  /** Metric instruments; no-ops unless the process registered an OpenTelemetry MeterProvider. */
  private readonly instruments: WorkerInstruments;
  private readonly putBacks: PutBack;
  /** The store's clock: timers and journal times the store compares are on it (store-clock.ts). */
  private readonly storeClock: StoreClock;
  private readonly dataLoss: DataLossWatch;
  /** Stops reporting the run queue's backlog (set while running, when the transport can count it). */
  private stopBacklog: (() => void) | undefined;

  constructor(options: WorkerOptions) {
    this.options = resolveWorkerOptions(options);
    for (const wf of this.options.workflows) this.registry.set(workflowKey(wf.name, wf.version), wf);
    const { store, transport, leaseMs, heartbeatMs, reapIntervalMs, logger } = this.options;
    this.instruments = workerInstruments({
      workflows: this.options.workflows.map((wf) => wf.name),
      deadLetterCodes: DEAD_LETTER_CODES,
      resumeReasons: RESUME_REASONS,
    });
    this.putBacks = new PutBack(store, () => [...this.registry.keys()], logger, this.instruments);
    this.keeper = new LeaseKeeper(store, leaseMs, heartbeatMs, logger, this.instruments);
    this.storeClock = new StoreClock(store, this.options.clock);
    this.dataLoss = new DataLossWatch(logger, this.instruments, this.options.onEvent, this.options.clock);
    this.maintenance = new Maintenance(store, transport, {
      reapIntervalMs,
      deadWorkerScanMs: this.options.deadWorkerScanMs,
      reclaimAfterMs: leaseMs,
      retentionMs: this.options.retentionMs,
      retentionSweepMs: this.options.retentionSweepMs,
      retentionTombstoneMs: this.options.retentionTombstoneMs,
      runsExpired: this.instruments.runsExpired,
      payloads: this.options.claimCheck.payloads,
      logger,
      emit: this.options.onEvent,
      takeLocally: (message) => this.takeLocally(message),
    });
  }

  get state(): WorkerState {
    return this.stateValue;
  }

  get workerId(): string {
    return this.options.workerId;
  }

  /** Run ids this worker executes right now. */
  get ownedRuns(): string[] {
    return [...this.sessions.keys()];
  }

  /** A snapshot for liveness and readiness probes; cheap, reads local state only. */
  health(): WorkerHealth {
    return {
      state: this.stateValue,
      runsInFlight: this.sessions.size,
      leasesHeld: this.keeper.size,
      lastRenewalPassAt: this.keeper.lastPass,
      lastRenewalOkAt: this.keeper.lastRenewal,
      storeFailing: this.keeper.failing,
      transportFailing: this.fetchFailing,
      storeClockOffsetMs: this.storeClock.sample?.offsetMs ?? null,
      storeDataLoss: this.dataLoss.last ?? null,
    };
  }

  /** Connects transport and store, then claims runs until stop(). */
  async start(): Promise<void> {
    if (this.stateValue !== 'created')
      throw new BatonError('BATON_STATE', `worker is ${this.stateValue}; start() runs once`);
    await this.options.transport.connect();
    await this.options.store.connect();
    // Registered before the first claim, so every lease this worker takes has a presence behind it.
    // A store without presence (optional in the contract) leaves a crashed worker to lease expiry.
    if (hasPresence(this.options.store)) await this.options.store.registerWorker(this.workerId);
    // Measured before the first claim: the first timer a run sets is on the store's clock already.
    await this.storeClock.start(this.options.logger);
    // The store may outlive this worker (it was passed in): a stopped worker reports nothing.
    this.options.store.onDataLoss?.((loss) => {
      if (this.stateValue !== 'stopped') this.dataLoss.report(loss, this.ownedRuns);
    });
    this.stateValue = 'running';
    const { transport } = this.options;
    if (transport.backlog !== undefined) {
      this.stopBacklog = observeBacklog(this.instruments, transport.name, () =>
        transport.backlog!(BACKLOG_READ_TIMEOUT_MS),
      );
    }
    this.keeper.start();
    this.maintenance.start();
    this.claimLoop = this.runClaimLoop();
    this.options.logger.info(
      { workerId: this.workerId, concurrency: this.options.concurrency },
      'worker started',
    );
  }

  /**
   * Graceful stop: no new claims; every owned run stops at its next step, in-flight activities get
   * `drainTimeoutMs` to finish, then each run is checkpointed, released and re-enqueued so another
   * worker continues it at once. Safe to call twice. The transport and store were passed in, so
   * they stay open: close them yourself when nothing else uses them.
   */
  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    if (this.stateValue === 'created') {
      this.stateValue = 'stopped';
      return;
    }
    this.stateValue = 'draining';
    this.fetchAbort.abort();
    this.slotFreed?.();
    await this.claimLoop;
    for (const session of this.sessions.values()) session.handoff();
    const deadline = setTimeout(() => {
      for (const session of this.sessions.values())
        session.abort(new BatonError('BATON_SHUTDOWN', 'worker shutting down'));
    }, this.options.drainTimeoutMs);
    deadline.unref();
    await Promise.allSettled([...this.handling]);
    clearTimeout(deadline);
    this.keeper.stop();
    this.storeClock.stop();
    this.stopBacklog?.();
    await this.maintenance.stop();
    const { store } = this.options;
    await (hasPresence(store) ? store.unregisterWorker(this.workerId) : Promise.resolve()).catch(
      (err: unknown) => {
        // Harmless: a registration left behind is forgotten by the next dead-worker scan.
        this.options.logger.warn({ err }, 'unregistering the worker failed');
      },
    );
    this.stateValue = 'stopped';
    this.options.logger.info({ workerId: this.workerId }, 'worker stopped');
  }

  // -------------------------------------------------------------------------------------------

  private async runClaimLoop(): Promise<void> {
    const { transport, concurrency, fetchWaitMs, logger } = this.options;
    while (this.stateValue === 'running') {
      const room = concurrency - this.slots;
      if (room <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      let batch: Delivery[];
      try {
        batch = await transport.fetch({
          max: Math.min(room, FETCH_BATCH),
          expiresMs: fetchWaitMs,
          signal: this.fetchAbort.signal,
        });
        this.fetchFailing = false;
      } catch (err) {
        if (this.stateValue !== 'running') break;
        this.fetchFailing = true;
        logger.warn({ err }, 'fetching run messages failed; retrying');
        await sleep(ERROR_BACKOFF_MS, undefined, { ref: false });
        continue;
      }
      for (const delivery of batch) {
        if (this.stateValue !== 'running') {
          await delivery.nak().catch(() => undefined);
          continue;
        }
        this.handle(delivery);
      }
    }
  }

  private handle(delivery: Delivery): void {
    this.slots++;
    const handled = this.handleDelivery(delivery).finally(() => {
      this.slots--;
      this.handling.delete(handled);
      this.slotFreed?.();
      this.slotFreed = undefined;
    });
    this.handling.add(handled);
  }

  /**
   * Handles a resume or wake the maintenance scans found as if the queue had delivered it, when
   * there is room. Nothing is lost if this process dies before the claim: the run stays acquirable
   * and the scans report it again a lease period later. A nak sends it through the queue instead.
   */
  private takeLocally(message: ResumeMessage | WakeMessage): boolean {
    if (this.stateValue !== 'running' || this.slots >= this.options.concurrency) return false;
    const { transport, logger } = this.options;
    const requeue = (): Promise<void> =>
      (message.kind === 'resume'
        ? enqueueResume(transport, message.runId, message.reason)
        : enqueueWake(transport, message.runId, message.reason)
      ).catch((err: unknown) => {
        logger.warn(
          { err, runId: message.runId },
          'requeueing a found run failed; the scans report it again',
        );
      });
    this.handle({
      data: encodeMessage(message),
      headers: {},
      deliveryCount: 1,
      ack: () => Promise.resolve(),
      nak: (delayMs) => {
        if (!delayMs) return requeue();
        setTimeout(() => void requeue(), delayMs).unref();
        return Promise.resolve();
      },
    });
    return true;
  }

  private deadLetter(
    delivery: Delivery,
    message: RunMessage | undefined,
    code: string,
    reason: string,
  ): Promise<void> {
    const letter = { code, reason, runId: runIdOf(delivery, message) };
    return deadLetterDelivery(delivery, letter, this.options, this.instruments, ERROR_BACKOFF_MS);
  }

  private async handleDelivery(delivery: Delivery): Promise<void> {
    let message: RunMessage | undefined;
    try {
      message = parseRunMessage(delivery, this.options.maxMessageBytes);
      await this.dispatch(message, delivery);
    } catch (err) {
      if (err instanceof PoisonMessage) {
        await this.deadLetter(delivery, message, err.letterCode, err.message);
        return;
      }
      if (delivery.deliveryCount >= this.options.maxDeliveries) {
        const reason = `failed ${delivery.deliveryCount} deliveries; last error: ${(err as Error)?.message ?? String(err)}`;
        await this.deadLetter(delivery, message, 'repeated-failure', reason);
        return;
      }
      this.options.logger.warn(
        { err, deliveryCount: delivery.deliveryCount, runId: message?.runId },
        'run message failed; it will be redelivered',
      );
      await delivery.nak(retryDelayMs(delivery)).catch(() => undefined);
    }
  }

  private async dispatch(message: RunMessage, delivery: Delivery): Promise<void> {
    const { store, transport, claimCheck } = this.options;
    switch (message.kind) {
      case 'start': {
        let workflow = this.registry.get(workflowKey(message.workflow, message.version));
        if (!workflow) {
          // A record may exist: a worker that has the version created it and died before the
          // ack. Then the run has begun and is put back like any other; else nothing has begun,
          // and the message is dead-lettered (unknown-workflow) for an operator to redrive.
          const existing = await store.getRun(message.runId);
          if (existing) return this.claimKnownRun(existing, message, delivery);
          workflow = this.lookup(message.workflow, message.version);
        }
        const acquiredAt = Date.now();
        const { leaseMs, workerId } = this.options;
        // Create and lease in one store call.
        const taken = await store.createRunAndLease(
          {
            runId: message.runId,
            workflow: message.workflow,
            version: message.version,
            input: await messageValue(claimCheck, message),
            idempotencyKey: message.idempotencyKey ?? null,
            traceparent: message.traceparent ?? null,
          },
          workerId,
          leaseMs,
        );
        // An existing run (same id or idempotency key) is claimed like any known run, as it was created.
        if (!taken.created) return this.claimKnownRun(taken.run, message, delivery);
        return this.claim(taken.run, workflow, message, delivery, { lease: taken.lease, acquiredAt });
      }
      case 'resume':
      case 'wake': {
        const run = await store.getRun(message.runId);
        if (!run)
          throw new PoisonMessage(
            'unknown-run',
            `${message.kind} message for run ${message.runId}, which the store does not know`,
          );
        return this.claimKnownRun(run, message, delivery);
      }
      case 'signal': {
        const { found, wake, dropped } = await store.deliverSignal(message.runId, {
          signalId: message.signalId,
          name: message.name,
          payload: await messageValue(claimCheck, message),
        });
        if (!found) return this.unknownRunYet(message, delivery);
        if (dropped === true) {
          // The run finished: nothing will read the signal, and redelivering it would change nothing.
          this.instruments.signalsDropped.add(1);
          this.options.logger.debug(
            { runId: message.runId, signal: message.name, signalId: message.signalId },
            'signal dropped: its run has already finished',
          );
          return delivery.ack();
        }
        if (wake) await enqueueWake(transport, message.runId, 'signal');
        return delivery.ack();
      }
      case 'cancel': {
        const { found, wake } = await store.requestCancel(message.runId, message.reason);
        if (!found) return this.unknownRunYet(message, delivery);
        this.sessions.get(message.runId)?.cancel(message.reason);
        if (wake) await enqueueWake(transport, message.runId, 'cancel');
        return delivery.ack();
      }
    }
  }

  /** Claims a run the store knows, if this worker registers its workflow version. */
  private async claimKnownRun(run: RunRecord, message: RunMessage, delivery: Delivery): Promise<void> {
    const workflow = this.registry.get(workflowKey(run.workflow, run.version));
    if (workflow) return this.claim(run, workflow, message, delivery);
    return this.putBacks.putBack(run, delivery);
  }

  /** A signal or cancel can overtake its run's start message; retry a while before giving up. */
  private async unknownRunYet(message: RunMessage, delivery: Delivery): Promise<void> {
    if (delivery.deliveryCount >= this.options.maxDeliveries) {
      throw new PoisonMessage(
        'unknown-run',
        `${message.kind} message for run ${message.runId}, which never started`,
      );
    }
    await delivery.nak(redeliveryDelayMs(delivery.deliveryCount, 100, 5_000));
  }

  private lookup(name: string, version: number): AnyWorkflowDefinition {
    const workflow = this.registry.get(workflowKey(name, version));
    if (!workflow) {
      const known = [...this.registry.keys()].join(', ');
      throw new PoisonMessage(
        'unknown-workflow',
        `workflow ${name}@${version} is not registered on this worker (it has: ${known}); ` +
          'deploy a worker that registers it, then redrive the dead letter',
      );
    }
    return workflow;
  }

  private async claim(
    run: RunRecord,
    workflow: AnyWorkflowDefinition,
    message: RunMessage,
    delivery: Delivery,
    /** The lease `createRunAndLease` took with the run it created. */
    taken?: { lease: AcquireResult; acquiredAt: number },
  ): Promise<void> {
    const { store, leaseMs, workerId, logger } = this.options;
    const acquiredAt = taken?.acquiredAt ?? Date.now();
    const lease = taken?.lease ?? (await store.acquireLease(run.runId, workerId, leaseMs));
    if (!lease.ok) {
      // Finished, or a live worker owns it (a duplicate or early message): nothing to do here.
      await delivery.ack();
      return;
    }
    await this.options.faults?.('lease-acquired', { runId: run.runId, epoch: lease.epoch });
    // The claim is durable (the lease), so the run does not wait for the ack's confirmation: a
    // lost ack only redelivers the message, and whoever gets it finds the lease taken or the run
    // finished, and acks it then.
    if (delivery.ackUnconfirmed) delivery.ackUnconfirmed();
    else
      void delivery
        .ack()
        .catch((err: unknown) =>
          logger.debug(
            { err, runId: run.runId },
            'ack of a claimed run failed; it will be redelivered and dropped',
          ),
        );
    const instruments = this.instruments;
    const { span, context: traceContext } = announceClaim(
      run,
      message,
      lease.epoch,
      workerId,
      instruments,
      this.options.onEvent,
    );

    // Every line and event about this run, from here and from its session, names it and its trace.
    const runContext = runEventContext(run, span);
    const runLogger = bindLogger(logger, runLogBindings(runContext, run.runId));
    const runOptions: ResolvedWorkerOptions = {
      ...this.options,
      logger: runLogger,
      onEvent: (event) => this.options.onEvent(event, runContext),
    };
    const session = new RunSession(
      {
        run,
        workflow,
        epoch: lease.epoch,
        acquiredAt,
        // Created by this very message and never leased before: it has no checkpoint to load.
        fresh: taken !== undefined && lease.epoch === 1,
        cancelRequested: lease.cancelRequested,
        traceContext,
      },
      runOptions,
      this.keeper,
      instruments,
      this.storeClock,
    );
    this.sessions.set(run.runId, session);
    instruments.runsInFlight.add(1);
    if (this.stateValue !== 'running') session.handoff();
    try {
      const end = await session.run();
      span.setAttribute(ATTR.end, end);
      if (end === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: session.failure });
      if (end === 'aborted') this.dataLoss.noteAborted(run.runId);
      this.report(end, run.runId, lease.epoch, session.failure, runOptions.onEvent);
    } catch (err) {
      span.setAttribute(ATTR.end, 'aborted');
      recordError(span, err);
      this.dataLoss.noteAborted(run.runId);
      // Counted on the run, and failed after too many in a row, unless it is not the run's fault.
      const counted = await handleClaimFailure(err, run.runId, lease.epoch, runOptions, instruments, () =>
        this.storeClock.now(),
      ).catch((recordErr: unknown) => {
        runLogger.warn({ err: recordErr, runId: run.runId }, 'recording a failed resume failed');
        return 'not-counted' as const;
      });
      if (counted === 'failed')
        this.report('failed', run.runId, lease.epoch, (err as Error)?.message, runOptions.onEvent);
      if (counted !== 'not-counted') return;
      runLogger.warn(
        { err, runId: run.runId, epoch: lease.epoch },
        'run stopped by an error; it resumes elsewhere',
      );
      runOptions.onEvent({
        type: 'run-aborted',
        runId: run.runId,
        epoch: lease.epoch,
        reason: (err as Error)?.message ?? String(err),
      });
    } finally {
      span.end();
      instruments.runsInFlight.add(-1);
      // A later session of the same run (this worker reclaimed it) keeps its entry.
      if (this.sessions.get(run.runId) === session) this.sessions.delete(run.runId);
    }
  }

  private report(
    end: SessionEnd,
    runId: string,
    epoch: number,
    failure: string | undefined,
    onEvent: (event: WorkerEvent) => void,
  ): void {
    if (end === 'completed') this.instruments.runsCompleted.add(1);
    if (end === 'failed') this.instruments.runsFailed.add(1);
    const event = sessionEndEvent(end, runId, epoch, failure);
    if (event) onEvent(event);
  }
}

/**
 * What every log line about a run carries: its id and workflow, and its span's ids under the
 * names OpenTelemetry's log data model and most log backends use (`trace_id`, `span_id`), so a
 * line leads to the trace and a trace to its lines.
 */
function runLogBindings(context: RunEventContext, runId: string): Record<string, unknown> {
  const bindings: Record<string, unknown> = { runId, workflow: context.workflow };
  if (context.traceId !== undefined) bindings.trace_id = context.traceId;
  if (context.spanId !== undefined) bindings.span_id = context.spanId;
  return bindings;
}

/** Backoff for a message that failed for a reason that may pass (a store hiccup, say). */
function retryDelayMs(delivery: Delivery): number {
  return redeliveryDelayMs(delivery.deliveryCount, ERROR_BACKOFF_MS, 30_000);
}
