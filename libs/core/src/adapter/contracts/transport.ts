/**
 * The transport contract: the bus. Made of capabilities, each an object of its own on the
 * transport (`transport.runQueue.enqueue(…)`, `transport.journal.append(…)`), so each adapter
 * composes capability modules instead of forwarding every method, and each section of the
 * conformance suite checks one:
 *
 * - {@link RunQueue} (`runQueue`): competing consumers over run messages (start/resume/wake/signal/cancel);
 * - {@link JournalLog} (`journal`): each run's append-only journal;
 * - {@link DeadLetterQueue} (`deadLetters`): where poison messages go, with a reason; listed,
 *   redriven, purged;
 * - {@link GroupLog} (`groupLog`, optional): logs of group records (contracts/group-journal.ts);
 * - {@link RunStreamLog} (`runStreams`, optional): runs' named streams (contracts/run-streams.ts).
 *
 * Left out on purpose: ordering between different runs, exactly-once delivery (a message may be
 * delivered more than once; the store's leases and idempotency keys make that harmless), and any
 * notion of leases (those live in the store, on its clock).
 */
import type { Adapter } from './adapter.js';
import type { GroupLog } from './group-journal.js';
import type { RunStreamLog } from './run-streams.js';
import type { RunPriority } from '../priority.js';

/** A message as it travels: opaque bytes plus string headers. */
export interface RawMessage {
  data: Uint8Array;
  headers: Record<string, string>;
}

/** One delivery of a run-queue message to one consumer. */
export interface Delivery extends RawMessage {
  /** 1 on first delivery, incremented on every redelivery. */
  deliveryCount: number;
  /** Removes the message from the queue for good. */
  ack(): Promise<void>;
  /**
   * Acks without waiting for the server's confirmation, for a message whose redelivery would be
   * harmless (a run already claimed through its lease). Optional: a transport whose ack costs
   * nothing extra leaves it out, and callers use ack().
   */
  ackUnconfirmed?(): void;
  /** Returns the message to the queue for redelivery, after `delayMs` if given. */
  nak(delayMs?: number): Promise<void>;
  /**
   * Hands the message to another consumer of the queue, after `delayMs` if given: for a bus whose
   * nak redelivers to the same consumer (Kafka: the partition's owner), it is published again where
   * another consumer reads it, then removed here (published first, so a crash in between leaves a
   * copy, never none). The copy's `deliveryCount` goes on from this one's. A consumer that holds
   * every part of the queue redelivers it to itself, as nak does. Optional: a bus whose nak already
   * reaches every consumer (NATS, memory) leaves it out, and callers use nak().
   */
  passOn?(delayMs?: number): Promise<void>;
}

export interface EnqueueOptions {
  /**
   * De-duplication id: a second enqueue with the same id inside the transport's window is
   * dropped (JetStream `Nats-Msg-Id`). Omit for messages that must always be delivered.
   */
  msgId?: string;
  headers?: Record<string, string>;
  /** The partitioning key (run id); transports that partition use it for ordering per run. */
  key?: string;
  /**
   * The message is a hint any worker may act on (a resume after reaping a dead worker's leases, a
   * timer's wake) and the sender consumes the queue itself. A partitioning transport may then put
   * it on a partition the sender holds, so it never waits on a dead member's partitions being
   * reassigned; ordering by `key` is given up for it. Ignored by transports without partitions.
   */
  local?: boolean;
  /**
   * The lane the message waits in (docs/priorities.md). `'normal'` and undefined are the same lane,
   * the one the run queue had before priorities, so a message without a priority travels exactly
   * as it always did. {@link RunQueue.fetch} claims from the lanes by the cycle of
   * `PRIORITY_CYCLE` (priority.ts). A value outside `RUN_PRIORITIES` is refused with a ConfigError.
   * @defaultValue 'normal'
   */
  priority?: RunPriority;
}

export interface FetchOptions {
  /** How many messages at most. */
  max: number;
  /** How long to wait for the first message before returning an empty batch. */
  expiresMs: number;
  /** Aborting returns the batch fetched so far (possibly empty). */
  signal?: AbortSignal;
}

export interface RunQueue {
  /** Publishes a run message; resolves once the bus has it durably. */
  enqueue(data: Uint8Array, options?: EnqueueOptions): Promise<void>;
  /**
   * Pulls up to `max` messages. A delivered message that is neither acked nor nakked is redelivered
   * after the transport's ack wait (so a crashed consumer loses nothing). With messages waiting in
   * more than one priority lane, the lanes are chosen by the claim cycle (`PriorityLanes`): higher
   * levels first, the lowest level with work at least once in every eight claims.
   */
  fetch(options: FetchOptions): Promise<Delivery[]>;
  /**
   * Run messages waiting to be claimed, in every priority lane, as the bus counts them: one cheap call to the server that
   * gives up after `timeoutMs`, made when metrics are collected. Undefined when the bus cannot say
   * (not connected, or the server did not answer in time). Optional: a transport without such a
   * count leaves it out and no backlog is reported. Each adapter documents what it counts.
   */
  backlog?(timeoutMs: number): Promise<number | undefined>;
  /**
   * The backlog part by part, for operators (`client.fleet.backlog()`): one call to the server,
   * bounded by `timeoutMs` like {@link backlog}; undefined when the bus cannot say. Its `total` is
   * what {@link backlog} counts. Optional: a transport without it leaves it out.
   */
  backlogDetail?(timeoutMs: number): Promise<BacklogDetail | undefined>;
  /**
   * Optional: the worker hands a partitioned bus the store's view of the live workers, before its
   * first fetch, so the bus can split its run queue among them without a consumer group of its
   * own (Kafka: docs/architecture.md). A transport without it shares its queue by its own means;
   * a store without presence gives none, and the transport keeps those means.
   */
  share?(membership: RunQueueMembership): void;
}

/** The live workers of a fleet as its store sees them ({@link RunQueue.share}). */
export interface RunQueueMembership {
  /** This worker's id, as the store's presence knows it. */
  readonly memberId: string;
  /**
   * The ids of the workers whose presence is alive, asked every `refreshMs` by the transport. A
   * dead worker leaves this list within about two periods of its store connection dropping. One
   * cheap store read per call: one worker of the fleet at a time lists the live workers and
   * publishes the list, the others read what it published (the worker's membership), so the
   * fleet's cost per period grows with its size, not with its square. `refreshMs` sizes that
   * worker's turn; a membership that lists the workers itself may ignore it.
   */
  members(refreshMs: number): Promise<string[]>;
}

/** One part of the run queue's backlog: a consumer (NATS), a partition (Kafka), the queue (memory). */
export interface BacklogPart {
  /** What the part is, as the bus names it: the consumer, or `<topic>/<partition>`. */
  name: string;
  /** The partition's number, on a partitioned bus (Kafka). */
  partition?: number;
  /**
   * Run messages waiting to be claimed: NATS, the consumer's `num_pending` (not yet delivered);
   * Kafka, the workers' consumer-group lag on the partition (not yet committed).
   */
  pending: number;
  /** Delivered to a worker and not yet acked (NATS `num_ack_pending`, memory); absent on Kafka. */
  ackPending?: number;
}

/** The run queue's backlog by part (see {@link RunQueue.backlogDetail}). */
export interface BacklogDetail {
  /** The sum of every part's `pending`: what `backlog()` reports. */
  total: number;
  parts: BacklogPart[];
}

/** One append: a batch of encoded entries, written as one record. */
export interface JournalAppend {
  runId: string;
  data: Uint8Array;
  /**
   * Optimistic concurrency: the position this writer believes is the run's last (0 for an empty
   * journal). The append fails with JournalConflictError if another record landed after it.
   * Omit to append unconditionally (used for the LeaseAcquired fence marker).
   */
  expectedLastPosition?: number;
}

export interface JournalRecord {
  /** Strictly increasing within a run. */
  position: number;
  data: Uint8Array;
}

export interface JournalLog {
  /** True when `expectedLastPosition` is enforced; otherwise fencing relies on epochs at replay. */
  readonly supportsOptimisticAppend: boolean;
  /**
   * True when reading a run's journal from position 0 scans a log other runs share (Kafka: the
   * run's whole partition). The worker then writes a checkpoint as soon as it has fenced a run
   * that has none, so every later read starts from a checkpoint's position.
   */
  readonly scansSharedLog?: boolean;
  /** Appends one record and resolves with its position once durable. */
  append(append: JournalAppend): Promise<number>;
  /** Records of a run with `position > afterPosition` (and `<= uptoPosition` when given), in order. */
  read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]>;
  /**
   * How {@link purge} works here: `deletes` (the run's records are gone when it resolves),
   * or `retention` (a shared log cannot drop one run's records: they stay until the bus's own
   * retention removes them, Kafka's `retention.ms`).
   */
  readonly purgeMode: 'deletes' | 'retention';
  /**
   * Removes the run's journal. Only for finished runs whose store data is already deleted (the
   * caller's rule: nothing of an unfinished run is ever removed). A run with no journal is fine.
   */
  purge(runId: string): Promise<void>;
}

export interface DeadLetter extends RawMessage {
  /** Why the message could not be processed, in words an operator can act on. */
  reason: string;
  /** Stable machine-readable cause, e.g. `unparseable`, `unknown-workflow`, `too-large`. */
  code: string;
  /** When it was dead-lettered (ms since epoch). */
  at: number;
}

/** A dead letter as the bus keeps it, with the id that names it for get, redrive and purge. */
export interface StoredDeadLetter extends DeadLetter {
  /**
   * Stable while the letter exists, never reused for another letter of the same queue. Opaque:
   * each transport says what it encodes (a stream sequence, a partition and offset, a counter).
   */
  id: string;
}

/** A page request of {@link DeadLetterQueue.page}. */
export interface DeadLetterQuery {
  /** How many letters at most, 1 to {@link MAX_DEAD_LETTER_PAGE}. @defaultValue 100 */
  limit?: number;
  /** The `cursor` of the previous page; omitted for the newest letters. */
  cursor?: string;
}

/** One page of dead letters, newest first. */
export interface DeadLetterPage {
  letters: StoredDeadLetter[];
  /** Present when older letters may follow: pass it as the next query's `cursor`. */
  cursor?: string;
}

/** What {@link DeadLetterQueue.purge} removes. */
export type DeadLetterPurge =
  | { ids: string[] }
  | { all: true }
  /** Letters dead-lettered before this time (ms since epoch, their `at`). */
  | { olderThan: number };

/** What {@link DeadLetterQueue.redrive} did. */
export interface RedriveResult {
  /** The letter's id; it is no longer listed. */
  id: string;
  /** How many bytes were put back on the run queue. */
  bytes: number;
}

/** The default page size of {@link DeadLetterQueue.page}. */
export const DEFAULT_DEAD_LETTER_PAGE = 100;
/** The largest page {@link DeadLetterQueue.page} returns. */
export const MAX_DEAD_LETTER_PAGE = 1_000;

export interface DeadLetterQueue {
  /** Stores a letter, after those stored before it. */
  add(letter: DeadLetter): Promise<void>;
  /**
   * The most recent dead letters, oldest first, at most `limit` (default 100). Kept for the
   * callers that only want the latest few; operators page with {@link page}.
   */
  list(limit?: number): Promise<DeadLetter[]>;
  /**
   * Dead letters newest first, a page at a time. A bad `limit` or a cursor this queue did not
   * issue is refused with a ConfigError naming it. Letters added after the first page are not
   * seen by later pages of that walk (they are newer than its start).
   */
  page(query?: DeadLetterQuery): Promise<DeadLetterPage>;
  /** The letter with this id, or undefined when there is none (never was, purged or redriven). */
  get(id: string): Promise<StoredDeadLetter | undefined>;
  /**
   * Puts the letter's original data and headers back on the run queue, then removes the letter,
   * in that order: a crash in between leaves both (the message runs twice, which the store's
   * idempotency makes harmless), never neither. An unknown id is refused with NotFoundError; a
   * letter whose data was cut to fit the dead-letter queue is refused with a ConfigError (its
   * bytes are not the original message).
   */
  redrive(id: string): Promise<RedriveResult>;
  /** Removes the chosen letters; resolves how many were removed (unknown ids count nothing). */
  purge(purge: DeadLetterPurge): Promise<number>;
}

/**
 * A bus adapter: NATS JetStream, Kafka, Redis, or in-memory. Its lifecycle is every adapter's
 * ({@link Adapter}): `connect()` creates streams, topics and consumers if missing; after `close()`
 * every capability's operations reject with BATON_CLOSED (`AdapterLifecycle.guard` applies that
 * rule once per capability).
 */
export interface Transport extends Adapter {
  readonly runQueue: RunQueue;
  readonly journal: JournalLog;
  readonly deadLetters: DeadLetterQueue;
  /**
   * Logs of group records, for group commit across runs (contracts/group-journal.ts). Optional:
   * a transport without it journals each run on its own only.
   */
  readonly groupLog?: GroupLog;
  /**
   * Run streams (contracts/run-streams.ts): the chunks a run writes for readers to follow.
   * Optional: a transport without it refuses `ctx.stream` writes with BATON_UNSUPPORTED.
   */
  readonly runStreams?: RunStreamLog;
}
