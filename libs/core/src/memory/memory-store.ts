/**
 * The in-process store: the embedded default for the demo and unit tests. No I/O. Its lifecycle
 * and the composition of its capabilities are here, each capability bound once to the store's
 * state and its closed check (`bindOperations`); the work is in one file per capability, as in the
 * Redis and Postgres stores: memory-leases.ts, memory-checkpoints.ts, memory-runs.ts, memory-waits.ts
 * (suspension, timers, signals, cancel), memory-pause.ts, memory-retention.ts, memory-payloads.ts,
 * memory-queries.ts (listing and counting runs), memory-fleet.ts (the workers' reports) and
 * memory-schedules.ts (schedules), over the
 * maps of memory-state.ts.
 *
 * It has no worker presence ({@link PresenceStore} is optional in the contract): an in-process
 * store has no connection that could drop before its worker, so a crashed in-process worker is
 * found by lease expiry alone.
 *
 * Invariants:
 * 1. Every method runs to completion without awaiting, so each is atomic exactly as the Lua
 *    scripts and SQL transactions of the real stores are.
 * 2. A lease's epoch only grows; a write (checkpoint, suspend, finish) succeeds only under the
 *    lease's current epoch and never once the lease is finished.
 * 3. A run has a timer only while its lease is suspended: acquiring, waking by signal or cancel,
 *    pausing and finishing all remove it.
 * 4. Values are cloned on the way in and out, so no caller holds a reference into the store.
 * 5. After close() every operation fails with BATON_CLOSED; before connect() operations work (an
 *    in-process store has nothing to connect).
 */
import type { Store } from '../adapter/contracts/store.js';
import type { JournalIndex } from '../adapter/contracts/group-journal.js';
import { bindOperations, type BoundOperations, type Operations } from '../adapter/lifecycle.js';
import { BatonError } from '../shared/errors.js';
import * as checkpoints from './memory-checkpoints.js';
import * as concurrency from './memory-concurrency.js';
import * as rateLimits from './memory-rate-limits.js';
import * as fleet from './memory-fleet.js';
import * as journalIndex from './memory-journal-index.js';
import * as leases from './memory-leases.js';
import * as payloads from './memory-payloads.js';
import * as pause from './memory-pause.js';
import * as queries from './memory-queries.js';
import * as retention from './memory-retention.js';
import * as runs from './memory-runs.js';
import * as schedules from './memory-schedules.js';
import { MemoryState } from './memory-state.js';
import * as waits from './memory-waits.js';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /**
   * The store's clock (ms since epoch); inject one to test expiry without waiting.
   * @defaultValue Date.now
   */
  clock?: () => number;
}

/**
 * Creates an in-process {@link Store} with the exact semantics of the contract (leases with
 * fencing epochs, checkpoints with history, run index with idempotency keys, timers, signals).
 *
 * @example
 * const store = memoryStore();
 * const lease = await store.leases.acquire('run-1', 'worker-a', 5_000);
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  return new MemoryStore(options.clock ?? Date.now);
}

/**
 * For tests: replaces the body of a memory store's checkpoint `seq` of `runId` with `stored`, as a
 * disk fault or a hand edit would leave it in a real store (its summary stays). Returns false when
 * the store is not a memory store or holds no such checkpoint.
 */
export function damageMemoryCheckpoint(store: Store, runId: string, seq: number, stored: unknown): boolean {
  return store instanceof MemoryStore && checkpoints.damageCheckpoint(store.state, runId, seq, stored);
}

/**
 * - `open`: from creation (nothing to connect);
 * - `closed`: close() was called; every operation then rejects with BATON_CLOSED.
 */
type MemoryStoreState = 'open' | 'closed';

class MemoryStore implements Store {
  readonly name = 'memory';
  private lifecycle: MemoryStoreState = 'open';
  readonly state: MemoryState;

  readonly leases: Store['leases'];
  readonly control: Store['control'];
  readonly checkpoints: Store['checkpoints'];
  readonly runs: Store['runs'];
  readonly timers: Store['timers'];
  readonly signals: Store['signals'];
  readonly retention: Store['retention'];
  readonly payloads: Store['payloads'];
  readonly fleet: Store['fleet'];
  readonly schedules: Store['schedules'];
  readonly concurrency: Store['concurrency'];
  readonly rateLimits: Store['rateLimits'];
  readonly journalIndex: JournalIndex;

  constructor(clock: () => number) {
    this.state = new MemoryState(clock);
    this.leases = this.bind('leases', {
      acquire: leases.acquireLease,
      renew: leases.renewLeases,
      release: leases.releaseLease,
      suspend: waits.suspendRun,
      reapExpired: leases.reapExpiredLeases,
      get: leases.getLease,
      now: (state: MemoryState) => state.clock(),
      recordClaimFailure: leases.recordClaimFailure,
    });
    this.control = {
      ...this.bind('control', {
        requestCancel: waits.requestCancel,
        closeCancels: waits.closeCancels,
        requestPause: pause.requestPause,
        pauseHeld: pause.pauseHeldRun,
        resume: pause.resumeRun,
      }),
      // Not an operation: a subscription, answered at once (and harmless after close()).
      watchCancels: (workerId, listener) => waits.watchCancels(this.state, workerId, listener),
    };
    this.checkpoints = this.bind('checkpoints', {
      write: checkpoints.writeCheckpoint,
      load: checkpoints.loadCheckpoint,
      list: checkpoints.listCheckpoints,
    });
    this.runs = this.bind('runs', {
      create: runs.createRun,
      createAndLease: runs.createRunAndLease,
      get: runs.getRun,
      finish: runs.finishRun,
      reopen: runs.reopenRun,
      list: queries.listRuns,
      count: queries.countRuns,
    });
    this.timers = this.bind('timers', { claimDue: waits.claimDueTimers });
    this.signals = this.bind('signals', { deliver: waits.deliverSignal, read: waits.readSignals });
    this.retention = this.bind('retention', {
      expired: retention.expiredRuns,
      delete: retention.deleteRun,
      deleteExpired: retention.deleteExpiredRuns,
      tombstone: retention.runTombstone,
    });
    this.payloads = {
      location: 'memory',
      ...this.bind('payloads', {
        put: payloads.putPayload,
        get: payloads.getPayload,
        delete: payloads.deletePayloads,
      }),
    };
    this.fleet = this.bind('fleet', {
      report: fleet.reportWorker,
      list: fleet.listWorkers,
      forget: fleet.forgetWorker,
    });
    this.schedules = this.bind('schedules', {
      create: schedules.createSchedule,
      get: schedules.getSchedule,
      update: schedules.updateSchedule,
      delete: schedules.deleteSchedule,
      list: schedules.listSchedules,
      due: schedules.dueSchedules,
    });
    this.concurrency = this.bind('concurrency', {
      acquire: concurrency.acquireSlot,
      release: concurrency.releaseSlot,
      state: concurrency.slotState,
    });
    this.rateLimits = this.bind('rateLimits', { take: rateLimits.takeRateToken });
    this.journalIndex = {
      groupsByDefault: true,
      ...this.bind('journalIndex', {
        appendPointers: journalIndex.appendPointers,
        markOwnJournal: journalIndex.markOwnJournal,
        readPointers: journalIndex.readPointers,
        deletePointers: journalIndex.deletePointers,
        groupLogUse: journalIndex.groupLogUse,
        forgetGroupLog: journalIndex.forgetGroupLog,
      }),
    };
  }

  async connect(): Promise<void> {
    this.open('connect');
  }

  async close(): Promise<void> {
    this.lifecycle = 'closed';
  }

  /**
   * A capability over the state: each method refuses after close() (invariant 5) and otherwise
   * runs its module function to completion, synchronously inside the call (invariant 1).
   */
  private bind<M extends Operations<MemoryState>>(
    label: string,
    operations: M,
  ): BoundOperations<MemoryState, M> {
    return bindOperations<MemoryState, M>(label, operations, async (operation, work) =>
      work(this.open(operation)),
    );
  }

  /** The store's data, or BATON_CLOSED naming the operation after close(). */
  private open(operation: string): MemoryState {
    if (this.lifecycle === 'closed') {
      throw new BatonError(
        'BATON_CLOSED',
        `memory store: ${operation} called after close(); create a new store`,
      );
    }
    return this.state;
  }
}
