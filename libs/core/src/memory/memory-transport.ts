/**
 * The in-process transport: the embedded default for the demo and unit tests. No I/O.
 *
 * Capabilities: the run queue (memory-run-queue.ts), the journal (memory-journal.ts, its calls
 * checked like every bus's by journal-log.ts), the run streams (over the same journal), the dead letters (memory-dead-letters.ts, under
 * core's administration) and the group logs (memory-group-log.ts). Every byte array is copied on
 * the way in and out, so no caller can change stored data.
 */
import { deadLetterQueue } from '../adapter/dead-letter-queue.js';
import { checkedJournal } from '../adapter/journal-log.js';
import { runStreamsOverJournal } from '../adapter/run-stream-log.js';
import type { RunStreamLog } from '../adapter/contracts/run-streams.js';
import type { DeadLetterQueue, JournalLog, RunQueue, Transport } from '../adapter/contracts/transport.js';
import type { GroupLog } from '../adapter/contracts/group-journal.js';
import { BatonError, ConfigError } from '../shared/errors.js';
import { guardClosed } from '../adapter/lifecycle.js';
import { MemoryDeadLetters } from './memory-dead-letters.js';
import { MemoryGroupLog } from './memory-group-log.js';
import { MemoryJournal } from './memory-journal.js';
import { MemoryRunQueue } from './memory-run-queue.js';

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
 * `closed` once `close()` was called: every operation then rejects (guardClosed).
 */
type LifecycleState = 'open' | 'closed';

class MemoryTransport implements Transport {
  readonly name = 'memory';
  readonly runQueue: RunQueue;
  readonly journal: JournalLog;
  readonly deadLetters: DeadLetterQueue;
  readonly groupLog: GroupLog;
  readonly runStreams: RunStreamLog;

  private state: LifecycleState = 'open';
  private closing: Promise<void> | undefined;
  private readonly queue: MemoryRunQueue;

  constructor(options: ResolvedMemoryTransportOptions) {
    const assertOpen = (operation: string): void => this.assertOpen(operation);
    this.queue = new MemoryRunQueue(options, assertOpen);
    // The backlog answers undefined once closed, rather than rejecting.
    this.runQueue = guardClosed('runQueue', this.queue, assertOpen, ['backlog', 'backlogDetail']);
    const journal = new MemoryJournal();
    this.journal = guardClosed('journal', checkedJournal(journal, 'memory transport'), assertOpen);
    // Run streams are logs of the same journal under keys no run id takes (run-stream-log.ts).
    this.runStreams = guardClosed('runStreams', runStreamsOverJournal(journal), assertOpen);
    this.deadLetters = guardClosed(
      'deadLetters',
      deadLetterQueue(new MemoryDeadLetters(options.maxDeadLetters), (data, enqueue) =>
        this.runQueue.enqueue(data, enqueue),
      ),
      assertOpen,
    );
    this.groupLog = new MemoryGroupLog(assertOpen);
  }

  async connect(): Promise<void> {
    this.assertOpen('connect');
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      // Closed synchronously, so nothing slips in between close() and its promise settling.
      this.state = 'closed';
      this.queue.close();
      this.closing = Promise.resolve();
    }
    return this.closing;
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
