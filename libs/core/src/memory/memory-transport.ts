/**
 * The in-process transport: the embedded default for the demo and unit tests. No I/O.
 *
 * Invariants:
 * 1. A message is in exactly one of the states ready / in flight / delayed / acked, and sits in
 *    the ready queue at most once (acked messages are skipped there, not spliced out).
 * 2. Only the current delivery of a message may nak it; a late nak from a delivery that already
 *    timed out would otherwise put a second copy in flight.
 * 3. Journal positions come from one counter shared by all runs (like a JetStream stream
 *    sequence): strictly increasing per run, never contiguous by promise.
 * 4. Every byte array is copied on the way in and out, so no caller can change stored data.
 */
import {
  checkDeadLetterPurge,
  checkDeadLetterQuery,
  pageOfDeadLetters,
  positionOfId,
} from '../dead-letter-check.js';
import type {
  BacklogDetail,
  DeadLetter,
  DeadLetterPage,
  DeadLetterPurge,
  DeadLetterQuery,
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
import { BatonError, ConfigError, JournalConflictError, NotFoundError } from '../errors.js';
import { MemoryGroupLog } from './memory-group-log.js';

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

/** The most dead letters `listDeadLetters()` returns when no limit is given. */
const DEFAULT_DEAD_LETTER_LIMIT = 100;

type MessageState = 'ready' | 'inflight' | 'delayed' | 'acked';

interface StoredMessage {
  data: Uint8Array;
  headers: Record<string, string>;
  deliveries: number;
  state: MessageState;
  /** The ack-wait or nak-delay timer, while one runs. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface Waiter {
  max: number;
  finish(batch: Delivery[]): void;
}

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
  private readonly ready: StoredMessage[] = [];
  /** Messages with a running timer, so close() can stop every one. */
  private readonly timed = new Set<StoredMessage>();
  private readonly waiters = new Set<Waiter>();
  /** msgId -> expiry; insertion order is expiry order because the window is constant. */
  private readonly seenMsgIds = new Map<string, number>();
  private readonly journals = new Map<string, JournalRecord[]>();
  private lastPosition = 0;
  /** Oldest first; each letter's id is its position from {@link lastDeadLetter}, as a string. */
  private deadLetters: { position: number; letter: StoredDeadLetter }[] = [];
  private lastDeadLetter = 0;

  constructor(private readonly options: ResolvedMemoryTransportOptions) {}

  async connect(): Promise<void> {
    this.assertOpen('connect');
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      // Closed synchronously, so nothing slips in between close() and its promise settling.
      this.state = 'closed';
      for (const message of this.timed) clearTimeout(message.timer);
      this.timed.clear();
      // Waiting fetchers get an empty batch rather than hanging until their expiry.
      for (const waiter of [...this.waiters]) waiter.finish([]);
      this.closing = Promise.resolve();
    }
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------
  // Run queue

  async enqueue(data: Uint8Array, options: EnqueueOptions = {}): Promise<void> {
    this.assertOpen('enqueue');
    if (options.msgId !== undefined && this.isDuplicate(options.msgId)) return;
    const message: StoredMessage = {
      data: new Uint8Array(data),
      headers: { ...options.headers },
      deliveries: 0,
      state: 'ready',
      timer: undefined,
    };
    this.ready.push(message);
    this.wakeWaiters();
  }

  async fetch(options: FetchOptions): Promise<Delivery[]> {
    this.assertOpen('fetch');
    const { max, expiresMs, signal } = options;
    if (max < 1) return [];
    const batch = this.take(max);
    if (batch.length > 0 || expiresMs <= 0 || signal?.aborted) return batch;
    return new Promise<Delivery[]>((resolve) => {
      const onAbort = (): void => waiter.finish([]);
      const waiter: Waiter = {
        max,
        finish: (result) => {
          clearTimeout(expiry);
          signal?.removeEventListener('abort', onAbort);
          this.waiters.delete(waiter);
          resolve(result);
        },
      };
      const expiry = setTimeout(() => waiter.finish([]), expiresMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
    });
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

  /** Messages ready for a fetch, and those nakked with a delay that will be: none in flight. */
  async backlog(): Promise<number | undefined> {
    if (this.state === 'closed') return undefined;
    let waiting = 0;
    for (const message of this.ready) if (message.state === 'ready') waiting++;
    for (const message of this.timed) if (message.state === 'delayed') waiting++;
    return waiting;
  }

  /** One part, `runs`: what backlog() counts, and the messages delivered and not yet acked. */
  async backlogDetail(): Promise<BacklogDetail | undefined> {
    const pending = await this.backlog();
    if (pending === undefined) return undefined;
    let ackPending = 0;
    for (const message of this.timed) if (message.state === 'inflight') ackPending++;
    return { total: pending, parts: [{ name: 'runs', pending, ackPending }] };
  }

  /** Hands ready messages to waiting fetchers, oldest fetcher first. */
  private wakeWaiters(): void {
    for (const waiter of this.waiters) {
      const batch = this.take(waiter.max);
      if (batch.length === 0) return;
      waiter.finish(batch);
    }
  }

  private take(max: number): Delivery[] {
    const batch: Delivery[] = [];
    while (batch.length < max) {
      const message = this.ready.shift();
      if (message === undefined) break;
      if (message.state !== 'ready') continue;
      batch.push(this.deliver(message));
    }
    return batch;
  }

  private deliver(message: StoredMessage): Delivery {
    message.deliveries += 1;
    message.state = 'inflight';
    const delivery = message.deliveries;
    this.startTimer(message, this.options.ackWaitMs);
    return {
      data: new Uint8Array(message.data),
      headers: { ...message.headers },
      deliveryCount: delivery,
      ack: async () => {
        this.assertOpen('ack');
        // A late ack from a timed-out delivery still counts: the work it confirms was done.
        this.stopTimer(message);
        message.state = 'acked';
      },
      nak: async (delayMs?: number) => {
        this.assertOpen('nak');
        if (message.state !== 'inflight' || message.deliveries !== delivery) return;
        this.stopTimer(message);
        if (delayMs !== undefined && delayMs > 0) {
          message.state = 'delayed';
          this.startTimer(message, delayMs);
        } else {
          this.makeReady(message);
        }
      },
    };
  }

  private startTimer(message: StoredMessage, delayMs: number): void {
    // Redelivery timers must not keep a finished process alive.
    message.timer = setTimeout(() => {
      this.timed.delete(message);
      message.timer = undefined;
      this.makeReady(message);
    }, delayMs).unref();
    this.timed.add(message);
  }

  private stopTimer(message: StoredMessage): void {
    clearTimeout(message.timer);
    message.timer = undefined;
    this.timed.delete(message);
  }

  private makeReady(message: StoredMessage): void {
    if (this.state === 'closed' || message.state === 'acked') return;
    message.state = 'ready';
    this.ready.push(message);
    this.wakeWaiters();
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
  // Dead letters

  async deadLetter(letter: DeadLetter): Promise<void> {
    this.assertOpen('deadLetter');
    this.lastDeadLetter += 1;
    const position = this.lastDeadLetter;
    this.deadLetters.push({ position, letter: { ...copyLetter(letter), id: String(position) } });
    if (this.deadLetters.length > this.options.maxDeadLetters) this.deadLetters.shift();
  }

  async listDeadLetters(limit = DEFAULT_DEAD_LETTER_LIMIT): Promise<DeadLetter[]> {
    this.assertOpen('listDeadLetters');
    if (limit <= 0) return [];
    return this.deadLetters.slice(-limit).map((l) => copyLetter(l.letter));
  }

  async pageDeadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    this.assertOpen('pageDeadLetters');
    const page = pageOfDeadLetters(this.deadLetters, checkDeadLetterQuery(query, 'memory transport'));
    return { ...page, letters: page.letters.map(copyStoredLetter) };
  }

  async getDeadLetter(id: string): Promise<StoredDeadLetter | undefined> {
    this.assertOpen('getDeadLetter');
    const found = this.deadLetters.find((l) => l.position === positionOfId(id));
    return found === undefined ? undefined : copyStoredLetter(found.letter);
  }

  async redriveDeadLetter(id: string): Promise<RedriveResult> {
    this.assertOpen('redriveDeadLetter');
    const letter = await this.getDeadLetter(id);
    if (letter === undefined) {
      throw new NotFoundError(
        `memory transport: no dead letter ${JSON.stringify(id)} to redrive; it was never there, or was already redriven or purged (list them with pageDeadLetters)`,
      );
    }
    await this.enqueue(letter.data, { headers: letter.headers });
    await this.purgeDeadLetters({ ids: [id] });
    return { id, bytes: letter.data.byteLength };
  }

  async purgeDeadLetters(purge: DeadLetterPurge): Promise<number> {
    this.assertOpen('purgeDeadLetters');
    checkDeadLetterPurge(purge, 'memory transport');
    const before = this.deadLetters.length;
    if ('all' in purge) this.deadLetters = [];
    else if ('ids' in purge) {
      const ids = new Set(purge.ids);
      this.deadLetters = this.deadLetters.filter((l) => !ids.has(l.letter.id));
    } else this.deadLetters = this.deadLetters.filter((l) => !(l.letter.at < purge.olderThan));
    return before - this.deadLetters.length;
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

function copyStoredLetter(letter: StoredDeadLetter): StoredDeadLetter {
  return { ...copyLetter(letter), id: letter.id };
}

function copyLetter(letter: DeadLetter): DeadLetter {
  return {
    data: new Uint8Array(letter.data),
    headers: { ...letter.headers },
    reason: letter.reason,
    code: letter.code,
    at: letter.at,
  };
}
