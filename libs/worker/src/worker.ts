/**
 * The Worker: claims runs from the transport's run queue and executes them (DESIGN §3). This file
 * is step 1 of a run's path through the worker, the lifecycle: it builds the rooms, starts them and
 * stops them. Read on in order: claim-loop.ts (fetch), dispatch.ts (by message kind), claim.ts
 * (lease, ack, session), run/run-session.ts (recovery from checkpoint and journal in
 * run/recovery.ts, then replay and execution), run/journal-writer.ts (appends and checkpoints).
 * The parts the worker keeps with its peers are in fleet/ (index.ts says what goes where).
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
import { BatonError, type AnyWorkflowDefinition } from '@baton/core';
import type { ResumeMessage, WakeMessage } from '@baton/core/runtime';
import { observeBacklog, workerInstruments, type WorkerInstruments } from '@baton/telemetry';
import { ClaimLoop } from './claim-loop.js';
import { DataLossWatch, type DataLossReport } from './data-loss.js';
import { Dispatcher, type DispatchDeps } from './dispatch.js';
import { FleetReporter, reportTtlMs } from './fleet/fleet-report.js';
import { LeaseKeeper } from './lease-keeper.js';
import { Maintenance } from './fleet/maintenance.js';
import { MemoryBudget } from './memory-budget.js';
import {
  resolveWorkerOptions,
  workflowKey,
  type ResolvedWorkerOptions,
  type WorkerOptions,
} from './options.js';
import { DEAD_LETTER_CODES } from './poison.js';
import { PutBack } from './put-back.js';
import { QueryResponder } from './queries/query-responder.js';
import type { RunSession } from './run/run-session.js';
import { SharedMembership } from './fleet/shared-membership.js';
import { StoreClock } from './fleet/store-clock.js';
import { UpdatePoll } from './run/update-poll.js';
import { HistoryWarnings } from './run/history-bounds.js';
import { VersionHolders } from './fleet/version-holders.js';
import { VersionRedrive } from './fleet/version-redrive.js';

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
  /** Claims are held back because the heap is above the memory budget (memory-budget.ts). */
  memoryHoldingBack?: boolean;
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
  'update',
];

/**
 * How long one backlog reading may take at metrics collection: a scrape must not wait on a slow
 * bus, and a reading that misses is left out of that scrape rather than delaying it.
 */
const BACKLOG_READ_TIMEOUT_MS = 1_000;

export class Worker {
  readonly options: ResolvedWorkerOptions;
  private stateValue: WorkerState = 'created';
  private readonly registry = new Map<string, AnyWorkflowDefinition>();
  private readonly sessions = new Map<string, RunSession>();
  /** Stops the store's calls of accepted cancels (RunControlStore.watchCancels), when it has them. */
  private unwatchCancels: (() => void) | undefined;
  private readonly keeper: LeaseKeeper;
  private readonly maintenance: Maintenance;
  private readonly claimLoop: ClaimLoop;
  /** Holds claims back while the heap is above the budget (memory-budget.ts). */
  private readonly memoryBudget: MemoryBudget;
  private stopping: Promise<void> | undefined;
  /** Metric instruments; no-ops unless the process registered an OpenTelemetry MeterProvider. */
  private readonly instruments: WorkerInstruments;
  /** The store's clock: timers and journal times the store compares are on it (store-clock.ts). */
  private readonly storeClock: StoreClock;
  private readonly dataLoss: DataLossWatch;
  /** Stops reporting the run queue's backlog (set while running, when the transport can count it). */
  private stopBacklog: (() => void) | undefined;
  /** The worker's report to the fleet (fleet-report.ts); built at start, when the store's clock is known. */
  private reporter: FleetReporter | undefined;
  /** Redrives unknown-workflow dead letters of the versions this worker registers (version-redrive.ts). */
  private readonly redrive: VersionRedrive;
  /** On a partitioned bus: the fleet's member list as this worker reads (or publishes) it. */
  private membership: SharedMembership | undefined;
  /** Tells the runs held here of update requests that arrive meanwhile (run/update-poll.ts). */
  private readonly updatePoll: UpdatePoll;
  /** Answers the queries asked of this worker's runs and of runs nobody holds (queries/). */
  private readonly queries: QueryResponder;

  constructor(options: WorkerOptions) {
    this.options = resolveWorkerOptions(options);
    for (const wf of this.options.workflows) this.registry.set(workflowKey(wf.name, wf.version), wf);
    const { store, transport, leaseMs, heartbeatMs, reapIntervalMs, logger } = this.options;
    this.instruments = workerInstruments({
      workflows: this.options.workflows.map((wf) => wf.name),
      versions: this.options.workflows.map((wf) => ({ workflow: wf.name, version: wf.version })),
      deadLetterCodes: DEAD_LETTER_CODES,
      resumeReasons: RESUME_REASONS,
    });
    const readBytes = this.instruments.journalReadBytes;
    this.options.journalReads.record = (bytes) => readBytes.add(bytes);
    const holders = new VersionHolders(store.fleet, this.options.workerId, logger);
    const putBacks = new PutBack(
      store,
      () => [...this.registry.keys()],
      logger,
      this.instruments,
      holders,
      this.options.missingVersionGraceMs,
      (event) => this.options.onEvent(event),
    );
    this.redrive = new VersionRedrive(transport.deadLetters, new Set(this.registry.keys()), logger, (event) =>
      this.options.onEvent(event),
    );
    this.keeper = new LeaseKeeper(store.leases, leaseMs, heartbeatMs, logger, this.instruments);
    this.updatePoll = new UpdatePoll(store.updates, this.sessions, logger);
    this.storeClock = new StoreClock(store.leases, this.options.clock);
    this.dataLoss = new DataLossWatch(logger, this.instruments, this.options.onEvent, this.options.clock);
    this.maintenance = new Maintenance(store, transport, {
      workerId: this.workerId,
      reapIntervalMs,
      deadWorkerScanMs: this.options.deadWorkerScanMs,
      reclaimAfterMs: leaseMs,
      retentionMs: this.options.retentionMs,
      retentionSweepMs: this.options.retentionSweepMs,
      retentionTombstoneMs: this.options.retentionTombstoneMs,
      groupLogTrimMs: this.options.groupLogTrimMs,
      scheduleScanMs: this.options.scheduleScanMs,
      faults: this.options.faults,
      payloadProtection: this.options.payloadProtection,
      runsExpired: this.instruments.runsExpired,
      payloads: this.options.claimCheck.payloads,
      logger,
      emit: this.options.onEvent,
      takeLocally: (message) => this.claimLoop.takeLocally(message),
    });
    const running = (): boolean => this.stateValue === 'running';
    const claims: DispatchDeps = {
      transport,
      store,
      logger,
      onEvent: this.options.onEvent,
      faults: this.options.faults,
      payloadProtection: this.options.payloadProtection,
      claimCheck: this.options.claimCheck,
      workerId: this.options.workerId,
      checkpointEvery: this.options.checkpointEvery,
      historyLimits: this.options.historyLimits,
      historyWarnings: new HistoryWarnings(),
      inProcessWaitMs: this.options.inProcessWaitMs,
      pipelineSteps: this.options.pipelineSteps,
      unreadableRetryMs: this.options.unreadableRetryMs,
      leaseMs,
      maxResumeFailures: this.options.maxResumeFailures,
      resumeBackoffMs: this.options.resumeBackoffMs,
      resumeBackoffMaxMs: this.options.resumeBackoffMaxMs,
      maxMessageBytes: this.options.maxMessageBytes,
      maxDeliveries: this.options.maxDeliveries,
      keeper: this.keeper,
      instruments: this.instruments,
      storeNow: () => this.storeClock.now(),
      dataLoss: this.dataLoss,
      sessions: this.sessions,
      running,
      lendSlot: () => this.claimLoop.lendSlot(),
    };
    const dispatcher = new Dispatcher(claims, this.registry, putBacks);
    this.queries = new QueryResponder({
      transport,
      store,
      payloadProtection: this.options.payloadProtection,
      claimCheck: this.options.claimCheck,
      inProcessWaitMs: this.options.inProcessWaitMs,
      workerId: this.options.workerId,
      logger,
      workflows: this.registry,
      held: (runId) => this.sessions.get(runId),
    });
    this.memoryBudget = new MemoryBudget(this.options.memoryBudget, logger, this.instruments);
    this.claimLoop = new ClaimLoop({
      transport,
      concurrency: this.options.concurrency,
      fetchWaitMs: this.options.fetchWaitMs,
      logger,
      handleDelivery: dispatcher.handle,
      running,
      budget: this.memoryBudget,
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
      transportFailing: this.claimLoop.failing,
      memoryHoldingBack: this.memoryBudget.holding,
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
    const { presence } = this.options.store;
    if (presence !== undefined) {
      await presence.register(this.workerId);
      // A partitioned bus splits its run queue among the workers presence sees alive: a worker
      // that dies gives its partitions up once its store connection drops. One worker at a time
      // lists them for the fleet; the others read its list (shared-membership.ts).
      if (this.options.transport.runQueue.share !== undefined) {
        this.membership = new SharedMembership(presence, this.workerId);
        this.options.transport.runQueue.share(this.membership);
      }
    }
    // A cancel another worker or a client records in the store reaches the run here at once,
    // instead of at the next lease renewal (the renewal still reports it, should a call be missed).
    this.unwatchCancels = this.options.store.control.watchCancels?.(this.workerId, (runId) =>
      this.sessions.get(runId)?.cancel(),
    );
    // Measured before the first claim: the first timer a run sets is on the store's clock already.
    await this.storeClock.start(this.options.logger);
    // The store may outlive this worker (it was passed in): a stopped worker reports nothing.
    this.options.store.onDataLoss?.((loss) => {
      if (this.stateValue !== 'stopped') this.dataLoss.report(loss, this.ownedRuns);
    });
    this.stateValue = 'running';
    this.reporter = this.fleetReporter();
    // Awaited (a lease at most), so a worker is listed once start() resolved; a failure is logged.
    await this.reporter.first();
    // After this worker's own report: a fleet of new workers opens the gate at its first look.
    await this.options.journalGate?.start(this.options.leaseMs);
    this.keeper.onTick(() => this.reporter?.tick());
    const { transport } = this.options;
    if (transport.runQueue.backlog !== undefined) {
      this.stopBacklog = observeBacklog(this.instruments, transport.name, () =>
        transport.runQueue.backlog!(BACKLOG_READ_TIMEOUT_MS),
      );
    }
    this.queries.start();
    this.keeper.start();
    this.updatePoll.start();
    this.maintenance.start();
    this.claimLoop.start();
    // After the first fleet report: a worker that lacks a redriven start sees this one listed.
    this.redrive.start();
    this.options.logger.info(
      {
        workerId: this.workerId,
        concurrency: this.options.concurrency,
        memoryBudgetMiB: Math.round(this.options.memoryBudget.budgetBytes / 1048576),
      },
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
    // What its departed record lists: the runs it held when told to stop, which it hands off.
    const heldWhenDraining = this.ownedRuns;
    // The fleet sees the worker draining at once; the hand-off does not wait for the write.
    void this.reporter?.send();
    await this.claimLoop.stop();
    for (const session of this.sessions.values()) session.handoff();
    const deadline = setTimeout(() => {
      for (const session of this.sessions.values())
        session.abort(new BatonError('BATON_SHUTDOWN', 'worker shutting down'));
    }, this.options.drainTimeoutMs);
    deadline.unref();
    await this.claimLoop.settled();
    clearTimeout(deadline);
    this.keeper.stop();
    this.updatePoll.stop();
    this.storeClock.stop();
    this.unwatchCancels?.();
    this.queries.stop();
    this.stopBacklog?.();
    await this.maintenance.stop();
    await this.redrive.stop();
    const { presence } = this.options.store;
    await (presence !== undefined ? presence.unregister(this.workerId) : Promise.resolve()).catch(
      (err: unknown) => {
        // Harmless: a registration left behind is forgotten by the next dead-worker scan.
        this.options.logger.warn({ err }, 'unregistering the worker failed');
      },
    );
    await this.membership?.leave().catch((err: unknown) => {
      // The turn then runs out by itself (1.5 ownership periods) and another worker lists.
      this.options.logger.warn({ err }, 'handing the membership turn on failed');
    });
    this.membership?.close();
    // After any report in flight, so no late report lists the stopped worker again.
    this.options.journalGate?.stop();
    await this.reporter?.depart(heldWhenDraining);
    this.stateValue = 'stopped';
    this.options.logger.info({ workerId: this.workerId }, 'worker stopped');
  }

  /** The fleet report's state, read from this worker at each report. */
  private fleetReporter(): FleetReporter {
    const { store, workflows, concurrency, heartbeatMs, leaseMs, logger } = this.options;
    const encryption = this.options.payloadProtection.encryption;
    return new FleetReporter(
      store.fleet,
      {
        workerId: this.workerId,
        workflows,
        concurrency,
        startedAt: this.storeClock.now(),
        readsGroupJournal: this.options.readsGroupJournal,
        ...(encryption !== undefined && {
          encryption: {
            activeKey: encryption.activeId,
            keys: encryption.ids,
            allowsPlaintext: this.options.payloadProtection.allowPlaintext,
          },
        }),
      },
      reportTtlMs(heartbeatMs, leaseMs),
      {
        runsHeld: () => this.sessions.size,
        runs: () => this.ownedRuns,
        lastRenewalAt: () => {
          const at = this.keeper.lastLeaseRenewal;
          // The keeper's times are on Date.now(); the store clock's estimate is on options.clock.
          return at === undefined ? null : this.storeClock.now() - (Date.now() - at);
        },
        draining: () => this.stateValue === 'draining',
      },
      logger,
      leaseMs,
      this.options.departedRetentionMs,
    );
  }
}
