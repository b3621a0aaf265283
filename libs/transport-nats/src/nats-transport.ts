/**
 * The NATS JetStream {@link Transport}: lifecycle, and the composition of its capabilities, which
 * live in their own files: the run queue (run-queue.ts), the journal (journal.ts), the dead letters
 * (dead-letter-admin.ts, under core's administration) and the group logs (group-log.ts).
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
  deadLetterQueue,
  journalOnContext,
  runStreamsOnContext,
  type RunStreamLog,
  shelfOnContext,
  type DeadLetterQueue,
  type GroupLog,
  type JournalLog,
  type RunQueue,
  type Transport,
} from '@baton/core/adapter';
import { MessageIds, type AppendRetryStats } from './message-ids.js';
import { openSession, untilElected, type NatsSession } from './connection.js';
import type { TransportContext } from './context.js';
import { natsDeadLetters } from './dead-letter-admin.js';
import { toNatsError } from './errors.js';
import { natsJournal } from './journal.js';
import { natsStreamWait } from './run-stream-wait.js';
import { NatsGroupLog } from './group-log.js';
import { layoutFor, type NatsLayout } from './layout.js';
import {
  resolveNatsTransportOptions,
  type NatsTransportOptions,
  type ResolvedNatsTransportOptions,
} from './options.js';
import { NatsRunQueue } from './run-queue.js';
import { ensureStreams } from './setup.js';

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
  readonly runQueue: RunQueue;
  readonly journal: JournalLog;
  readonly runStreams: RunStreamLog;
  readonly deadLetters: DeadLetterQueue;
  readonly groupLog: GroupLog;

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
  private readonly queue: NatsRunQueue;

  constructor(private readonly options: ResolvedNatsTransportOptions) {
    this.layout = layoutFor(options.prefix);
    // Each operation is checked for close() once (lifecycle.ts, invariant 5): by the capability's
    // guard on entry, after which `connected` hands out the context, or by `open` for work after
    // an await and for the group log, which has no guard.
    const open = (operation: string): TransportContext => this.lifecycle.open(operation);
    const connected = (operation: string): TransportContext => this.lifecycle.connected(operation);
    this.queue = new NatsRunQueue(connected, open, () => this.lifecycle.peek(), options.priorityLanes);
    // The backlog answers undefined on a closed transport, rather than rejecting.
    this.runQueue = this.lifecycle.guard('runQueue', this.queue, ['backlog', 'backlogDetail']);
    this.journal = this.lifecycle.guard(
      'journal',
      journalOnContext(connected, natsJournal, 'nats transport'),
    );
    // Subjects `<prefix>.journal.<runId>.s.<stream>` of the journal stream (core's run-stream-log.ts).
    this.runStreams = this.lifecycle.guard(
      'runStreams',
      runStreamsOnContext(connected, natsJournal, undefined, natsStreamWait(connected)),
    );
    this.deadLetters = this.lifecycle.guard(
      'deadLetters',
      deadLetterQueue(shelfOnContext(open, natsDeadLetters), (data, enqueue) =>
        this.runQueue.enqueue(data, enqueue),
      ),
    );
    this.groupLog = new NatsGroupLog(open);
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
    this.queue.close();
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
}
