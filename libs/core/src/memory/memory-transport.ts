/**
 * The in-process transport: the embedded default for the demo and unit tests. No I/O.
 *
 * Invariants:
 * 1. The run queue is one lane per priority level (memory-run-lane.ts holds the queue's own
 *    invariants); fetch chooses among them by the claim cycle (priority-lanes.ts).
 * 2. msgId de-duplication spans the lanes: a start enqueued twice at different priorities is kept once.
 * 3. Journal positions come from one counter shared by all runs (like a JetStream stream
 *    sequence): strictly increasing per run, never contiguous by promise.
 * 4. Every byte array is copied on the way in and out, so no caller can change stored data.
 */
import { deadLetterQueue } from '../dead-letter-queue.js';
import type {
  BacklogDetail,
  BacklogPart,
  DeadLetter,
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
  DeadLetterQueue,
  Delivery,
  EnqueueOptions,
  FetchOptions,
  JournalAppend,
  JournalRecord,
  RedriveResult,
  StoredDeadLetter,
  Transport,
} from '../contracts/transport.js';
import type { GroupLog } from '../contracts/group-journal.js';
import { BatonError, ConfigError, JournalConflictError } from '../errors.js';
import { DEFAULT_RUN_PRIORITY, RUN_PRIORITIES, checkRunPriority, type RunPriority } from '../priority.js';
import { PriorityLanes } from '../priority-lanes.js';
import { MemoryDeadLetters } from './memory-dead-letters.js';
import { MemoryGroupLog } from './memory-group-log.js';
import { MemoryRunLane } from './memory-run-lane.js';

/** Options of {@link memoryTransport}. */
export interface MemoryTransportOptions {
  /**
   * How long a delivered message may stay unacked before it is redelivered.
   * @defaultValue 30_000
   */
  ackWaitMs?: number;
  /**
   * How long an enqueue's `msgId` suppresses later enqueues with the same id.
   * @defaultValue 120_000
   */
  dedupWindowMs?: number;
  /**
   * How many dead letters are kept; the oldest are dropped beyond it so a poison-message storm
   * cannot exhaust memory.
   * @defaultValue 10_000
   */
  maxDeadLetters?: number;
}

/** {@link MemoryTransportOptions} with every default applied. */
export type ResolvedMemoryTransportOptions = Required<MemoryTransportOptions>;

const DEFAULTS: ResolvedMemoryTransportOptions = {
  ackWaitMs: 30_000,
  dedupWindowMs: 120_000,
  maxDeadLetters: 10_000,
};

/**
 * Creates an in-process {@link Transport}: a FIFO run queue with competing consumers, ack-wait
 * redelivery, nak delays and msgId de-duplication; per-run journals with optimistic append; a
 * dead-letter list.
 *
 * @example
 * const transport = memoryTransport({ ackWaitMs: 5_000 });
 * await transport.connect();
 */
export function memoryTransport(options: MemoryTransportOptions = {}): Transport {
  return new MemoryTransport(resolveOptions(options));
}

function resolveOptions(options: MemoryTransportOptions): ResolvedMemoryTransportOptions {
  const resolved: ResolvedMemoryTransportOptions = {
    ackWaitMs: options.ackWaitMs ?? DEFAULTS.ackWaitMs,
    dedupWindowMs: options.dedupWindowMs ?? DEFAULTS.dedupWindowMs,
    maxDeadLetters: options.maxDeadLetters ?? DEFAULTS.maxDeadLetters,
  };
  for (const [key, value] of Object.entries(resolved)) {
    const positive = key !== 'dedupWindowMs';
    if (!Number.isFinite(value) || value < 0 || (positive && value === 0)) {
      throw new ConfigError(
        `memoryTransport: ${key} must be a ${positive ? 'positive' : 'non-negative'} number of ` +
          `milliseconds (or count), got ${String(value)}`,
      );
    }
  }
  return resolved;
}

/**
 * Lifecycle: `open` from construction (the memory transport needs no connect, but accepts it);
 * `closed` once `close()` was called: every operation then rejects.
 */
type LifecycleState = 'open' | 'closed';

class MemoryTransport implements Transport {
  readonly name = 'memory';
  readonly supportsOptimisticAppend = true;
  readonly journalPurge = 'deletes';
  readonly groupLog: GroupLog = new MemoryGroupLog((operation) => this.assertOpen(operation));

  private state: LifecycleState = 'open';
  private closing: Promise<void> | undefined;
  /** One lane per priority level; `normal` is the queue as it was before priorities. */
  private readonly lanes: Record<RunPriority, MemoryRunLane>;
  private readonly prioritised: PriorityLanes;
  /** msgId -> expiry; insertion order is expiry order because the window is constant. */
  private readonly seenMsgIds = new Map<string, number>();
  private readonly journals = new Map<string, JournalRecord[]>();
  private lastPosition = 0;
  private readonly deadLetters: DeadLetterQueue;

  constructor(private readonly options: ResolvedMemoryTransportOptions) {
    this.deadLetters = deadLetterQueue(new MemoryDeadLetters(options.maxDeadLetters), (data, enqueue) =>
      this.enqueue(data, enqueue),
    );
    const lane = (): MemoryRunLane =>
      new MemoryRunLane(options.ackWaitMs, (operation) => this.assertOpen(operation));
    this.lanes = { high: lane(), normal: lane(), low: lane() };
    this.prioritised = new PriorityLanes({
      high: (o) => this.lanes.high.fetch(o),
      normal: (o) => this.lanes.normal.fetch(o),
      low: (o) => this.lanes.low.fetch(o),
    });
  }

  async connect(): Promise<void> {
    this.assertOpen('connect');
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      // Closed synchronously, so nothing slips in between close() and its promise settling.
      this.state = 'closed';
      this.prioritised.close();
      for (const lane of Object.values(this.lanes)) lane.close();
      this.closing = Promise.resolve();
    }
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------
  // Run queue

  async enqueue(data: Uint8Array, options: EnqueueOptions = {}): Promise<void> {
    this.assertOpen('enqueue');
    const priority = checkRunPriority(options.priority, 'memory transport: enqueue') ?? DEFAULT_RUN_PRIORITY;
    if (options.msgId !== undefined && this.isDuplicate(options.msgId)) return;
    this.lanes[priority].enqueue(data, options.headers);
  }

  /** Takes from the priority lanes by the claim cycle (priority-lanes.ts). */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    this.assertOpen('fetch');
    return this.prioritised.fetch(options);
  }

  private isDuplicate(msgId: string): boolean {
    const now = Date.now();
    for (const [id, expiresAt] of this.seenMsgIds) {
      if (expiresAt > now) break;
      this.seenMsgIds.delete(id);
    }
    if (this.seenMsgIds.has(msgId)) return true;
    this.seenMsgIds.set(msgId, now + this.options.dedupWindowMs);
    return false;
  }

  /** Messages ready for a fetch, and those nakked with a delay that will be, in every lane. */
  async backlog(): Promise<number | undefined> {
    return (await this.backlogDetail())?.total;
  }

  /**
   * One part per lane that holds anything: `runs` (the default lane, always listed), `runs.high`,
   * `runs.low`; each with what backlog() counts and the messages delivered and not yet acked.
   */
  async backlogDetail(): Promise<BacklogDetail | undefined> {
    if (this.state === 'closed') return undefined;
    const parts: BacklogPart[] = [];
    for (const priority of RUN_PRIORITIES) {
      const { pending, ackPending } = this.lanes[priority].counts();
      if (priority !== DEFAULT_RUN_PRIORITY && pending + ackPending === 0) continue;
      parts.push({
        name: priority === DEFAULT_RUN_PRIORITY ? 'runs' : `runs.${priority}`,
        pending,
        ackPending,
      });
    }
    return { total: parts.reduce((sum, part) => sum + part.pending, 0), parts };
  }

  // -------------------------------------------------------------------------------------------
  // Journal

  async append(append: JournalAppend): Promise<number> {
    this.assertOpen('append');
    const records = this.journals.get(append.runId) ?? [];
    const actualLast = records.at(-1)?.position ?? 0;
    if (append.expectedLastPosition !== undefined && append.expectedLastPosition !== actualLast) {
      throw new JournalConflictError(append.runId, append.expectedLastPosition, actualLast);
    }
    this.lastPosition += 1;
    // Buffer.from copies like new Uint8Array, from Node's pool for small records (no
    // ArrayBuffer of its own each); reads hand out Uint8Array copies as before.
    records.push({ position: this.lastPosition, data: Buffer.from(append.data) });
    this.journals.set(append.runId, records);
    return this.lastPosition;
  }

  async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
    this.assertOpen('read');
    const records = this.journals.get(runId) ?? [];
    return records
      .filter((r) => r.position > afterPosition && (uptoPosition === undefined || r.position <= uptoPosition))
      .map((r) => ({ position: r.position, data: new Uint8Array(r.data) }));
  }

  async purgeJournal(runId: string): Promise<void> {
    this.assertOpen('purgeJournal');
    this.journals.delete(runId);
  }

  // -------------------------------------------------------------------------------------------
  // Dead letters (memory-dead-letters.ts; paging, redrive and purge are the shared ones)

  async deadLetter(letter: DeadLetter): Promise<void> {
    this.assertOpen('deadLetter');
    return this.deadLetters.deadLetter(letter);
  }

  async listDeadLetters(limit?: number): Promise<DeadLetter[]> {
    this.assertOpen('listDeadLetters');
    return this.deadLetters.listDeadLetters(limit);
  }

  async pageDeadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    this.assertOpen('pageDeadLetters');
    return this.deadLetters.pageDeadLetters(query);
  }

  async getDeadLetter(id: string): Promise<StoredDeadLetter | undefined> {
    this.assertOpen('getDeadLetter');
    return this.deadLetters.getDeadLetter(id);
  }

  async redriveDeadLetter(id: string): Promise<RedriveResult> {
    this.assertOpen('redriveDeadLetter');
    return this.deadLetters.redriveDeadLetter(id);
  }

  async purgeDeadLetters(purge: DeadLetterPurge): Promise<number> {
    this.assertOpen('purgeDeadLetters');
    return this.deadLetters.purgeDeadLetters(purge);
  }

  private assertOpen(operation: string): void {
    if (this.state === 'closed') {
      throw new BatonError(
        'BATON_CLOSED',
        `memory transport: ${operation} called after close(); create a new transport instead`,
      );
    }
  }
}
