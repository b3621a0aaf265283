/**
 * The in-process store: the embedded default for the demo and unit tests. No I/O. Its lifecycle
 * and the composition of its capabilities are here, each capability module bound whole to the
 * store's state and its closed check (`bindCapabilities`); the work is in one file per capability,
 * each written against its contract (`OperationsOf`), as in the Redis and Postgres stores:
 * memory-leases.ts, memory-control.ts (cancel, pause, resume), memory-checkpoints.ts,
 * memory-runs.ts and memory-queries.ts, memory-attributes.ts, memory-waits.ts (timers, signals), memory-retention.ts,
 * memory-payloads.ts, memory-fleet.ts, memory-schedules.ts, memory-concurrency.ts,
 * memory-rate-limits.ts, memory-updates.ts, memory-promises.ts and memory-journal-index.ts, over
 * the maps of memory-state.ts; and memory-query-mailbox.ts (queries to runs) over a map of its own.
 * Like every
 * store, it is a `StoreAdapter` behind `checkedStore` (adapter/checked-store.ts), which checks the
 * callers' arguments before they reach it.
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
import type { Adapter } from '../adapter/contracts/adapter.js';
import type { JournalIndex } from '../adapter/contracts/group-journal.js';
import type { Store, StoreAdapter } from '../adapter/contracts/store.js';
import { checkedStore } from '../adapter/checked-store.js';
import { bindCapabilities, bindOperations, type OperationRunner } from '../adapter/lifecycle.js';
import { BatonError } from '../shared/errors.js';
import { attributes } from './memory-attributes.js';
import { checkpoints, damageCheckpoint } from './memory-checkpoints.js';
import { concurrency } from './memory-concurrency.js';
import { control, watchCancels } from './memory-control.js';
import { fleet } from './memory-fleet.js';
import { journalIndex } from './memory-journal-index.js';
import { leases } from './memory-leases.js';
import { payloads } from './memory-payloads.js';
import { promises } from './memory-promises.js';
import { listen, MailboxState, queryMailbox } from './memory-query-mailbox.js';
import { runQueries } from './memory-queries.js';
import { rateLimits } from './memory-rate-limits.js';
import { retention } from './memory-retention.js';
import { runIndex } from './memory-runs.js';
import { schedules } from './memory-schedules.js';
import { MemoryState } from './memory-state.js';
import { signals, timers } from './memory-waits.js';
import { updates } from './memory-updates.js';

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
  return checkedStore(new MemoryStore(options.clock ?? Date.now));
}

/**
 * For tests: replaces the body of a memory store's checkpoint `seq` of `runId` with `stored`, as a
 * disk fault or a hand edit would leave it in a real store (its summary stays). Returns false when
 * the store is not a memory store or holds no such checkpoint.
 */
export function damageMemoryCheckpoint(store: Store, runId: string, seq: number, stored: unknown): boolean {
  return store instanceof MemoryStore && damageCheckpoint(store.state, runId, seq, stored);
}

/**
 * - `open`: from creation (nothing to connect);
 * - `closed`: close() was called; every operation then rejects with BATON_CLOSED.
 */
type MemoryStoreState = 'open' | 'closed';

// The class's capabilities are the contract's members (the journal index always there), not
// restated here: the constructor binds them, each through the one closed check, and assigns them at
// once from an object TypeScript checks is complete.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
interface MemoryStore extends StoreAdapter {
  readonly journalIndex: JournalIndex;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class MemoryStore implements StoreAdapter {
  readonly name = 'memory';
  private lifecycle: MemoryStoreState = 'open';
  readonly state: MemoryState;
  /** The asks under way and the listening workers (memory-query-mailbox.ts). */
  private readonly mailbox = new MailboxState();

  constructor(clock: () => number) {
    this.state = new MemoryState(clock);
    // Each method refuses after close() (invariant 5) and otherwise runs its module function to
    // completion, synchronously inside the call (invariant 1).
    const run: OperationRunner<MemoryState> = async (operation, work) => work(this.open(operation));
    const bound = bindCapabilities(
      {
        leases,
        control,
        checkpoints,
        runs: { ...runIndex, ...runQueries },
        attributes,
        timers,
        signals,
        retention,
        payloads,
        fleet,
        schedules,
        concurrency,
        rateLimits,
        updates,
        promises,
        journalIndex,
      },
      run,
    );
    const toMailbox: OperationRunner<MailboxState> = (operation, work) =>
      run(operation, async () => work(this.mailbox));
    const queries = bindOperations('queries', queryMailbox, toMailbox);
    const capabilities: Omit<MemoryStore, keyof Adapter | 'state'> = {
      ...bound,
      queries: {
        ...queries,
        listen: (workerId, listener) => listen(this.mailbox, workerId, listener),
      },
      // Not an operation: a subscription, answered at once (and harmless after close()).
      control: {
        ...bound.control,
        watchCancels: (workerId, listener) => watchCancels(this.state, workerId, listener),
      },
      payloads: { location: 'memory', ...bound.payloads },
      journalIndex: { groupsByDefault: true, ...bound.journalIndex },
    };
    Object.assign(this, capabilities);
  }

  async connect(): Promise<void> {
    this.open('connect');
  }

  async close(): Promise<void> {
    this.lifecycle = 'closed';
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
