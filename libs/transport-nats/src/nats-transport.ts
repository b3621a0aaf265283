/**
 * The NATS JetStream {@link Transport}: lifecycle, and the seams to the run queue, the journal and
 * the dead-letter queue, which live in their own files.
 *
 * Invariants:
 * 1. connect() runs once at a time; a second call while it runs shares its promise, one after it
 *    succeeded resolves at once, one after it failed tries again.
 * 2. close() is idempotent and final: from its first call every operation throws BATON_CLOSED,
 *    waiting fetches return what they have, late messages are handed back (nakked) before the
 *    connection drains, and a connect() still in flight is closed when it lands.
 */
import {
  AdapterLifecycle,
  PriorityLanes,
  deadLetterQueue,
  type BacklogDetail,
  type Delivery,
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterPurge,
  type DeadLetterQuery,
  type EnqueueOptions,
  type FetchOptions,
} from '@baton/core/adapter';
import type {
  GroupLog,
  JournalAppend,
  JournalRecord,
  RedriveResult,
  StoredDeadLetter,
  Transport,
} from '@baton/core/adapter';
import { MessageIds, type AppendRetryStats } from './message-ids.js';
import { openSession, untilElected, type NatsSession } from './connection.js';
import type { TransportContext } from './context.js';
import { NatsDeadLetters } from './dead-letter-admin.js';
import { toNatsError } from './errors.js';
import { appendJournalRecord, purgeJournal, readJournal } from './journal.js';
import { NatsGroupLog } from './group-log.js';
import { layoutFor, type NatsLayout } from './layout.js';
import {
  resolveNatsTransportOptions,
  type NatsTransportOptions,
  type ResolvedNatsTransportOptions,
} from './options.js';
import { consumerBacklog, consumerPending, enqueueRunMessage, fetchRunMessages } from './run-queue.js';
import { ensureStreams } from './setup.js';

/**
 * How long a priority lane found empty is left unasked while another lane supplies the fetches: a
 * run started at a higher level behind a busy lower one waits at most about this much longer to be
 * claimed than on an idle queue (docs/priorities.md).
 */
const EMPTY_LANE_RECHECK_MS = 50;

/** How long close() lets late messages be handed back and the connection drain before it drops it. */
const DRAIN_TIMEOUT_MS = 2_000;

/**
 * Creates a {@link Transport} on NATS JetStream. Options are checked now (ConfigError naming the
 * option); nothing touches the network until connect().
 *
 * @example
 * const transport = natsTransport({ servers: 'nats://nats:4222', prefix: 'baton' });
 * await transport.connect(); // creates BATON_RUNS, BATON_JOURNAL, BATON_DLQ and baton-workers if missing
 */
export function natsTransport(options: NatsTransportOptions = {}): Transport {
  return new NatsTransport(resolveNatsTransportOptions(options));
}

class NatsTransport implements Transport {
  readonly name = 'nats';
  readonly supportsOptimisticAppend = true;
  readonly journalPurge = 'deletes';
  readonly groupLog: GroupLog = new NatsGroupLog((operation) => this.open(operation));
  /** The dead-letter queue: core's administration over the DLQ stream (dead-letter-admin.ts). */
  private readonly deadLetters = deadLetterQueue(
    new NatsDeadLetters((operation) => this.open(operation)),
    (data, options) => this.enqueue(data, options),
  );

  /** created, connecting, open (streams and consumer in place), closed (final). */
  private readonly lifecycle = new AdapterLifecycle<TransportContext>({
    adapter: 'nats transport',
    connectHint: 'await transport.connect() first',
    closedHint: 'create a new transport instead',
  });
  private readonly closeController = new AbortController();
  private readonly messageIds = new MessageIds();
  /** Journal appends retried after a lost acknowledgement (append-retry.ts). */
  private readonly appendStats: AppendRetryStats = { retried: 0, landedEarlier: 0 };
  private readonly pending = new Set<Promise<unknown>>();
  private readonly layout: NatsLayout;
  /**
   * The run queue's priority lanes. Asking an empty lane costs a round trip, so a lane found empty
   * is skipped for {@link EMPTY_LANE_RECHECK_MS} while another lane supplies the fetch: a worker
   * busy with runs of one level pays for the other lanes a few times a second, not on every fetch.
   */
  private readonly lanes = new PriorityLanes(
    {
      high: (options, foundEmpty) =>
        fetchRunMessages(this.open('fetch'), this.layout.runLanes.high, options, foundEmpty),
      normal: (options, foundEmpty) =>
        fetchRunMessages(this.open('fetch'), this.layout.runLanes.normal, options, foundEmpty),
      low: (options, foundEmpty) =>
        fetchRunMessages(this.open('fetch'), this.layout.runLanes.low, options, foundEmpty),
    },
    EMPTY_LANE_RECHECK_MS,
  );

  constructor(private readonly options: ResolvedNatsTransportOptions) {
    this.layout = layoutFor(options.prefix);
  }

  connect(): Promise<void> {
    return this.lifecycle.connect(
      () => this.setUp(),
      (context) => context.session.nc.close(),
    );
  }

  private async setUp(): Promise<TransportContext> {
    let session: NatsSession | undefined;
    try {
      session = await openSession(this.options);
      const opened = session;
      const streams = await untilElected(
        () => ensureStreams(opened.jsm, this.options, this.layout),
        this.options.leaderWaitMs,
      );
      return this.contextFor(session, streams);
    } catch (err) {
      await session?.nc.close().catch(() => undefined);
      throw toNatsError(err, { servers: this.options.displayServers, operation: 'connect' });
    }
  }

  close(): Promise<void> {
    // Waiting fetches end now, before a connect under way is waited for.
    this.closeController.abort();
    this.lanes.close();
    return this.lifecycle.close((context) => this.shutDown(context));
  }

  private async shutDown(context: TransportContext | undefined): Promise<void> {
    const session = context?.session;
    if (session === undefined || session.nc.isClosed()) return;
    const nc = session.nc;
    // Nothing can be handed back or flushed to a server that is not there.
    if (!session.isConnected()) {
      await nc.close().catch(() => undefined);
      return;
    }
    // Fetches just ended and are handing late messages back; let them finish first. Bounded:
    // while the server is unreachable, nothing they wait for will come.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
    });
    try {
      await Promise.race([Promise.allSettled([...this.pending]), giveUp]);
      await Promise.race([nc.drain().catch(() => undefined), giveUp]);
    } finally {
      clearTimeout(timer);
      await nc.close().catch(() => undefined);
    }
  }

  private contextFor(session: NatsSession, streams: TransportContext['streams']): TransportContext {
    return {
      session,
      options: this.options,
      layout: this.layout,
      streams,
      messageIds: this.messageIds,
      appendStats: this.appendStats,
      closing: this.closeController.signal,
      assertOpen: (operation) => this.lifecycle.assertNotClosed(operation),
      toError: (operation, err) => toNatsError(err, { servers: this.options.displayServers, operation }),
      track: (work) => {
        this.pending.add(work);
        void work.finally(() => this.pending.delete(work)).catch(() => undefined);
      },
    };
  }

  /** The context of an open transport; throws BATON_CLOSED or BATON_NOT_CONNECTED otherwise. */
  private open(operation: string): TransportContext {
    return this.lifecycle.open(operation);
  }

  // ------------------------------------------------------------------------------------------

  async enqueue(data: Uint8Array, options?: EnqueueOptions): Promise<void> {
    return enqueueRunMessage(this.open('enqueue'), data, options);
  }

  /**
   * Takes from the priority lanes by the claim cycle (priority-lanes.ts; see {@link lanes}), or,
   * without `priorityLanes`, from the runs stream alone as before priorities.
   */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const context = this.open('fetch');
    if (!this.options.priorityLanes) return fetchRunMessages(context, this.layout.runLanes.normal, options);
    return this.lanes.fetch(options);
  }

  /**
   * The lane consumers' `num_pending`, summed: messages of the run streams not yet delivered to
   * any worker. Messages delivered and not yet acked (being claimed, or waiting for their ack wait
   * to run out) are not counted. One consumer-info request per lane, together bounded by `timeoutMs`.
   */
  async backlog(timeoutMs: number): Promise<number | undefined> {
    const context = this.lifecycle.peek();
    if (context === undefined || this.closeController.signal.aborted) return undefined;
    return consumerPending(context, timeoutMs);
  }

  /**
   * One part per lane consumer (the `normal` one always, the others when they hold anything): its
   * `num_pending` (what {@link backlog} counts) and its `num_ack_pending` (delivered to a worker,
   * not yet acked). One consumer-info request per lane.
   */
  async backlogDetail(timeoutMs: number): Promise<BacklogDetail | undefined> {
    const context = this.lifecycle.peek();
    if (context === undefined || this.closeController.signal.aborted) return undefined;
    return consumerBacklog(context, timeoutMs);
  }

  async append(append: JournalAppend): Promise<number> {
    return appendJournalRecord(this.open('append'), append);
  }

  async read(runId: string, afterPosition: number, uptoPosition?: number): Promise<JournalRecord[]> {
    return readJournal(this.open('read'), runId, afterPosition, uptoPosition);
  }

  async purgeJournal(runId: string): Promise<void> {
    return purgeJournal(this.open('purgeJournal'), runId);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    return this.deadLetters.deadLetter(letter);
  }

  async listDeadLetters(limit?: number): Promise<DeadLetter[]> {
    this.open('listDeadLetters');
    return this.deadLetters.listDeadLetters(limit);
  }

  async pageDeadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    this.open('pageDeadLetters');
    return this.deadLetters.pageDeadLetters(query);
  }

  async getDeadLetter(id: string): Promise<StoredDeadLetter | undefined> {
    this.open('getDeadLetter');
    return this.deadLetters.getDeadLetter(id);
  }

  async redriveDeadLetter(id: string): Promise<RedriveResult> {
    this.open('redriveDeadLetter');
    return this.deadLetters.redriveDeadLetter(id);
  }

  async purgeDeadLetters(purge: DeadLetterPurge): Promise<number> {
    this.open('purgeDeadLetters');
    return this.deadLetters.purgeDeadLetters(purge);
  }
}
