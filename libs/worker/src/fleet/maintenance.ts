/**
 * The scans every worker runs:
 * - the dead-worker scan (every `deadWorkerScanMs`): workers whose presence connection to the
 *   store dropped (SIGKILL, OOM) have their held leases reaped at once, long before they expire.
 *   Only on a store with presence (optional in the contract): without it, the reaper below finds
 *   a dead worker's runs once their leases expire;
 * - the reaper (every `reapIntervalMs`): leases that expired (node loss, a partition, a frozen
 *   process, where no connection drops) get a `resume` message;
 * - the timer scan (same period, same pass): due timers of suspended runs get a `wake` message;
 * - the retention sweep (every `retentionSweepMs`, only when `retentionMs` is set): finished runs
 *   older than `retentionMs` lose their store data, then their journal (docs/retention.md). The
 *   store's delete checks that the run is finished, atomically, so no unfinished run is ever touched.
 *   A pass deletes batches while expired runs remain, within {@link RETENTION_SWEEP}'s bounds.
 * - the group-log trim (every `groupLogTrimMs`, with a group journal): group records no kept run
 *   names any more (every run in them deleted) are removed from the bus (group-log-trim.ts).
 * - the schedule scan (every `scheduleScanMs`): due schedules start their runs and move on, with
 *   a compare-and-set per schedule (schedule-firing.ts, docs/schedules.md); in turns like the reaper.
 * Each store call pushes what it returns into the future, so two workers scanning at once enqueue
 * a run once, and a message lost on the way is sent again a period later.
 *
 * Turns (a store with presence): the fleet takes the dead-worker scan and the reaper's pass in
 * turns ({@link PresenceStore.takeScanTurn}), a turn as long as the scan's period. Only the turn's
 * holder scans, and renews its turn every period; a worker refused asks again after
 * `period x max(1, workers / ASKERS_PER_TURN)`. Without turns every worker would scan every
 * period: N scans per period, and the dead-worker scan reads all N workers' presence, N x O(N).
 * With them the store serves one scan and about ASKERS_PER_TURN + 1 asks per period at any fleet
 * size. A holder that dies lets its turn run out within 1.5 periods, and an asker takes the next
 * within about period / ASKERS_PER_TURN: the failover time does not grow with the fleet.
 *
 * A run the scan finds is first offered to this worker (`takeLocally`), which claims it at once
 * when it has room: failover then costs no trip through the bus and, on a partitioned bus, never
 * waits for a dead member's partitions to be reassigned. Only what it declines is enqueued.
 */
import { type PayloadStore, type ScanTurn, type Store, type Transport } from '@baton/core/adapter';
import { type ResumeMessage, type WakeMessage, type PayloadProtection } from '@baton/core/runtime';
import type { WorkerEvent } from '../events.js';
import type { FaultHook } from '../faults.js';
import type { Logger } from '../logger.js';
import { enqueueResume, enqueueWake } from '../run/run-messages.js';
import { GroupLogTrimmer, type GroupLogTrimPass } from './group-log-trim.js';
import { ScheduleFiring, type ScheduleFiringPass } from './schedule-firing.js';

const BATCH = 100;
/** The names of the scans' turns in the store. */
export const SCAN_TURNS = {
  deadWorkers: 'dead-workers',
  expiredLeases: 'expired-leases',
  groupLogs: 'group-logs',
  schedules: 'schedules',
} as const;
/**
 * How many of a fleet's workers ask for a turn per period, about: a refused worker waits
 * `workers / ASKERS_PER_TURN` periods before asking again. More askers find a lapsed turn sooner
 * (a dead holder's), at the price of more asks the store serves.
 */
export const ASKERS_PER_TURN = 8;
/**
 * A turn lasts this many periods: the holder's next pass (jittered, at most 1.25 periods later)
 * renews it before it runs out, so the turn stays with one worker while it lives.
 */
const TURN_PERIODS = 1.5;
/**
 * The retention sweep's bounds. A pass deletes batches (one store round trip each) while expired
 * runs remain, but stops after `passRuns` runs or `passMs`, so it never holds the worker for long;
 * a pass that stopped on a bound is followed by the next after a pause as long as it took,
 * instead of a whole sweep interval: a backlog drains at half the store's pace, and a fleet
 * completing thousands of runs a second stays bounded (docs/retention.md).
 */
export const RETENTION_SWEEP = { batch: 500, passRuns: 20_000, passMs: 1_000, purgeBacklog: 20_000 } as const;
/** Journal purges of one batch in flight at once. */
const PURGES_IN_FLIGHT = 128;

export interface MaintenanceOptions {
  /** This worker, as it asks for the dead-worker scan's turn. */
  workerId: string;
  reapIntervalMs: number;
  /** 0 turns the dead-worker scan off. */
  deadWorkerScanMs: number;
  /** How long a reaped run is not reported again (the lease length). */
  reclaimAfterMs: number;
  logger: Logger;
  emit: (event: WorkerEvent) => void;
  /**
   * Offers a found run to this worker: true when it took the message as if it had come from the
   * queue (it had room), false to have it enqueued for any worker.
   * @defaultValue every run is enqueued
   */
  takeLocally?: (message: ResumeMessage | WakeMessage) => boolean;
  /** Time to live of finished runs; 0 turns the retention sweep off. @defaultValue 0 */
  retentionMs?: number;
  /** Interval of the retention sweep. @defaultValue 60_000 */
  retentionSweepMs?: number;
  /** Where large payloads are kept, when not in the store: the sweep deletes them there too. */
  payloads?: PayloadStore;
  /** How long a deleted run's tombstone lives (result() then fails at once). @defaultValue retentionMs */
  retentionTombstoneMs?: number;
  /** Counts the runs the sweep deletes. */
  runsExpired?: { add(value: number): void };
  /** Interval of the group-log trim; 0 (or no group journal) turns it off. @defaultValue 0 */
  groupLogTrimMs?: number;
  /** Test hook of the schedule scan (the `schedule-starts-sent` point). */
  faults?: FaultHook;
  /** Interval of the schedule scan; 0 turns it off (this worker fires no schedule). @defaultValue 0 */
  scheduleScanMs?: number;
  /** Seals the input of each run a schedule starts (docs/integrity.md). */
  payloadProtection?: PayloadProtection;
}

/** What one pass of the retention sweep did. */
export interface SweepPass {
  deleted: string[];
  /** True when it stopped on a bound with expired runs left: the next pass comes soon. */
  more: boolean;
  elapsedMs: number;
}

/** A loop that runs `pass` every `intervalMs` (jittered) until stopped, one pass at a time. */
class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    /** Resolves a delay to have the next pass sooner than the interval (a backlog remains). */
    private readonly pass: () => Promise<void | { againInMs: number }>,
  ) {}

  start(): void {
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(againInMs?: number): void {
    if (this.stopped) return;
    // Jitter spreads the scans of a fleet that started together.
    const delay = againInMs ?? this.intervalMs * (0.75 + Math.random() * 0.5);
    this.timer = setTimeout(() => {
      this.running = this.pass().then(
        (next) => this.schedule(next?.againInMs),
        () => this.schedule(),
      );
    }, delay);
    this.timer.unref();
  }
}

export class Maintenance {
  private readonly loops: Periodic[] = [];
  private stopped = false;
  /** Workers in the fleet as the last scan turn counted them (undefined: no turns, in-process store). */
  private fleetSize: number | undefined;
  /** Journal purges (and the rest) of batches the store already deleted, in order. */
  private afterStore: Promise<void> = Promise.resolve();
  private afterStoreBacklog = 0;
  private schedules: ScheduleFiring | undefined;

  constructor(
    private readonly store: Store,
    private readonly transport: Transport,
    private readonly options: MaintenanceOptions,
  ) {
    this.loops.push(
      new Periodic(options.reapIntervalMs, () =>
        this.inTurn(SCAN_TURNS.expiredLeases, options.reapIntervalMs, () => this.scanOnce()),
      ),
    );
    if (options.deadWorkerScanMs > 0 && store.presence !== undefined) {
      this.loops.push(
        new Periodic(options.deadWorkerScanMs, () =>
          this.inTurn(SCAN_TURNS.deadWorkers, options.deadWorkerScanMs, () => this.scanDeadWorkers()),
        ),
      );
    }
    const { groupLog } = transport;
    const index = store.journalIndex;
    if ((options.groupLogTrimMs ?? 0) > 0 && groupLog !== undefined && index !== undefined) {
      const trimmer = new GroupLogTrimmer(groupLog, index);
      const periodMs = options.groupLogTrimMs!;
      this.loops.push(
        new Periodic(periodMs, () =>
          this.inTurn(SCAN_TURNS.groupLogs, periodMs, async () => {
            await this.trimGroupLogs(trimmer);
          }),
        ),
      );
    }
    const scheduleScanMs = options.scheduleScanMs ?? 0;
    if (scheduleScanMs > 0) {
      this.schedules = new ScheduleFiring(store, transport, {
        logger: options.logger,
        emit: options.emit,
        recheckMs: scheduleScanMs,
        faults: options.faults,
        payloadProtection: options.payloadProtection,
      });
      this.loops.push(
        new Periodic(scheduleScanMs, () =>
          this.inTurn(SCAN_TURNS.schedules, scheduleScanMs, async () => {
            const pass = await this.fireDueSchedules();
            // A full batch: more are due; the holder renews its turn and goes on at once.
            return pass.more && !this.stopped ? { againInMs: 10 } : undefined;
          }),
        ),
      );
    }
    if ((options.retentionMs ?? 0) > 0) {
      this.loops.push(
        new Periodic(options.retentionSweepMs ?? 60_000, async () => {
          const pass = await this.sweepPass();
          return pass.more ? { againInMs: Math.max(50, pass.elapsedMs) } : undefined;
        }),
      );
    }
  }

  start(): void {
    for (const loop of this.loops) loop.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops.map((loop) => loop.stop()));
    await this.afterStore;
  }

  /**
   * One pass of the reaper and the timer scan (the caller decides whose turn it is); exported for
   * tests that want to drive it.
   */
  async scanOnce(): Promise<void> {
    try {
      await this.reap('expired', (limit) =>
        this.store.leases.reapExpired(limit, this.options.reclaimAfterMs),
      );
      await this.wakeDueTimers();
    } catch (err) {
      this.options.logger.warn({ err }, 'maintenance scan failed; retrying next period');
    }
  }

  /**
   * Runs `scan` when this worker holds its turn (or the store has no turns: then every worker
   * scans every period). Refused, it resolves when to ask again: later in a larger fleet.
   */
  async inTurn(
    scan: string,
    periodMs: number,
    pass: () => Promise<void | { againInMs: number }>,
  ): Promise<void | { againInMs: number }> {
    const { presence } = this.store;
    if (presence === undefined) return pass();
    let turn: ScanTurn;
    try {
      turn = await presence.takeScanTurn(scan, this.options.workerId, periodMs * TURN_PERIODS);
    } catch (err) {
      this.options.logger.warn(
        { err, scan },
        'asking for the turn of a scan failed; asking again next period',
      );
      return;
    }
    this.fleetSize = turn.workers;
    if (turn.held) return pass();
    const periods = Math.max(1, turn.workers / ASKERS_PER_TURN);
    return { againInMs: periodMs * periods * (0.75 + Math.random() * 0.5) };
  }

  /**
   * One pass of the schedule scan (the caller decides whose turn it is); exported for tests that
   * want to drive it. Never throws.
   */
  async fireDueSchedules(): Promise<ScheduleFiringPass> {
    if (this.schedules === undefined || this.stopped) return { started: [], more: false };
    return this.schedules.fireDue();
  }

  /** One pass of the group-log trim (the caller decides whose turn it is); never throws. */
  async trimGroupLogs(trimmer: GroupLogTrimmer): Promise<GroupLogTrimPass | undefined> {
    const started = Date.now();
    try {
      const pass = await trimmer.pass();
      const level = pass.trimmed > 0 || pass.forgotten > 0 ? 'info' : 'debug';
      this.options.logger[level]({ ...pass, elapsedMs: Date.now() - started }, 'group logs trimmed');
      return pass;
    } catch (err) {
      this.options.logger.warn({ err }, 'trimming group logs failed; retrying next period');
      return undefined;
    }
  }

  /** One pass of the dead-worker scan (the caller decides whose turn it is). */
  async scanDeadWorkers(): Promise<void> {
    const { presence } = this.store;
    // A store without presence has no dead workers to find; lease expiry finds their runs.
    if (presence === undefined) return;
    try {
      await this.reap('dead-worker', (limit) => presence.reapDead(limit, this.options.reclaimAfterMs));
    } catch (err) {
      this.options.logger.warn({ err }, 'dead-worker scan failed; retrying next period');
    }
  }

  /**
   * One pass of the retention sweep (see {@link sweepPass}) and the journal purges it queued;
   * returns the deleted run ids.
   */
  async sweepExpiredRuns(): Promise<string[]> {
    const { deleted } = await this.sweepPass();
    await this.afterStore;
    return deleted;
  }

  /**
   * One pass of the retention sweep: batches of finished runs older than `retentionMs` are
   * deleted, store first (one round trip per batch, leaving tombstones), then their journals,
   * until none is left or a bound of {@link RETENTION_SWEEP} is reached. The store hands workers
   * sweeping at once disjoint runs, so no run is deleted twice and no sweep waits for another.
   */
  async sweepPass(): Promise<SweepPass> {
    const retentionMs = this.options.retentionMs ?? 0;
    const started = performance.now();
    const deleted: string[] = [];
    if (retentionMs <= 0) return { deleted, more: false, elapsedMs: 0 };
    const tombstoneMs = this.options.retentionTombstoneMs ?? retentionMs;
    let batches = 0;
    let more = false;
    try {
      while (!this.stopped) {
        const want = Math.min(RETENTION_SWEEP.batch, RETENTION_SWEEP.passRuns - deleted.length);
        if (want <= 0) {
          more = true;
          break;
        }
        const runIds = await this.store.retention.deleteExpired(retentionMs, want, tombstoneMs);
        batches += 1;
        if (runIds.length > 0) {
          deleted.push(...runIds);
          this.options.runsExpired?.add(runIds.length);
          this.queueAfterStore(runIds);
          // The queue is bounded: past it, the store waits for the bus.
          if (this.afterStoreBacklog > RETENTION_SWEEP.purgeBacklog) await this.afterStore;
        }
        if (runIds.length < want) break;
        if (performance.now() - started >= RETENTION_SWEEP.passMs) {
          more = true;
          break;
        }
      }
    } catch (err) {
      this.options.logger.warn(
        { err, deleted: deleted.length },
        'retention sweep failed; retrying next period',
      );
    }
    const elapsedMs = Math.round(performance.now() - started);
    if (deleted.length > 0) {
      this.options.logger.info(
        {
          deleted: deleted.length,
          batches,
          more,
          purgeBacklog: this.afterStoreBacklog,
          elapsedMs,
          retentionMs,
        },
        'retention sweep',
      );
    } else {
      this.options.logger.debug({ batches, elapsedMs, retentionMs }, 'retention sweep: nothing expired');
    }
    return { deleted, more, elapsedMs };
  }

  /**
   * What follows a batch's store delete (journal purges, payloads kept apart, the `runs-expired`
   * event) runs behind the sweep, one batch after the other: on NATS a purge is one request per
   * run and far slower than the store's batch, and the store must not wait for it while the
   * backlog stays under {@link RETENTION_SWEEP}'s `purgeBacklog`. stop() waits for it.
   */
  private queueAfterStore(runIds: string[]): void {
    this.afterStoreBacklog += runIds.length;
    this.afterStore = this.afterStore.then(async () => {
      try {
        await this.purgeJournals(runIds);
        await this.deleteSeparatePayloads(runIds);
        this.options.emit({ type: 'runs-expired', runIds });
      } catch (err) {
        // Only the event's listener can throw here; the next batch's purges must still run.
        this.options.logger.warn({ err }, 'a runs-expired listener failed');
      } finally {
        this.afterStoreBacklog -= runIds.length;
      }
    });
  }

  /**
   * The journals (and run streams) of runs whose store data is gone, a few at a time. A failed purge leaves that
   * journal to the bus's own limits (the store data, the gate, is already gone): it is counted
   * and logged, never retried. Returns the number of failures.
   */
  private async purgeJournals(runIds: string[]): Promise<number> {
    let failures = 0;
    let firstError: unknown;
    for (let i = 0; i < runIds.length; i += PURGES_IN_FLIGHT) {
      const results = await Promise.allSettled(
        runIds.slice(i, i + PURGES_IN_FLIGHT).map(async (runId) => {
          await this.transport.journal.purge(runId);
          // The run's streams go with it (docs/streams.md, "Retention").
          await this.transport.runStreams?.purge(runId);
        }),
      );
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        failures += 1;
        firstError ??= result.reason;
      }
    }
    if (failures > 0) {
      this.options.logger.warn(
        { err: firstError, failures, runs: runIds.length },
        "purging expired runs' journals failed; those journals stay until the bus's own retention",
      );
    }
    return failures;
  }

  /**
   * Payloads kept apart from the store (the NATS object store) of runs just deleted: one call per
   * pass, since such a store lists its objects to find a run's. A failure leaves them behind.
   */
  private async deleteSeparatePayloads(runIds: string[]): Promise<void> {
    const payloads = this.options.payloads;
    if (payloads === undefined || payloads === this.store.payloads || runIds.length === 0) return;
    try {
      await payloads.delete(runIds);
    } catch (err) {
      this.options.logger.warn(
        { err, runs: runIds.length, location: payloads.location },
        'deleting the large payloads of expired runs failed; they stay behind',
      );
    }
  }

  private async reap(
    cause: 'expired' | 'dead-worker',
    reapBatch: (limit: number) => Promise<string[]>,
  ): Promise<void> {
    for (;;) {
      const runIds = await reapBatch(BATCH);
      if (runIds.length === 0) return;
      // The scan's holder takes its share of a dead worker's runs, not all of them: with turns
      // it is the same worker every time, and one worker holding every moved run would be the
      // next failure's whole cost. The rest go to the queue, for any worker.
      let share = Math.ceil(runIds.length / Math.max(1, this.fleetSize ?? 1));
      await Promise.all(
        runIds.map((runId) =>
          share-- > 0 && this.offer({ kind: 'resume', runId, reason: 'reaped', since: Date.now() })
            ? undefined
            : enqueueResume(this.transport.runQueue, runId, 'reaped'),
        ),
      );
      this.options.logger.info({ runIds, cause }, 'reaped leases');
      this.options.emit({ type: 'leases-reaped', runIds, cause });
      if (runIds.length < BATCH || this.stopped) return;
    }
  }

  private offer(message: ResumeMessage | WakeMessage): boolean {
    return !this.stopped && (this.options.takeLocally?.(message) ?? false);
  }

  private async wakeDueTimers(): Promise<void> {
    for (;;) {
      const due = await this.store.timers.claimDue(BATCH, this.options.reclaimAfterMs);
      if (due.length === 0) return;
      await Promise.all(
        due.map(({ runId }) =>
          this.offer({ kind: 'wake', runId, reason: 'timer' })
            ? undefined
            : enqueueWake(this.transport.runQueue, runId, 'timer'),
        ),
      );
      this.options.emit({ type: 'timers-due', runIds: due.map((t) => t.runId) });
      if (due.length < BATCH || this.stopped) return;
    }
  }
}
