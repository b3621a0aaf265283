/**
 * The run queue on JetStream: a work-queue stream and one durable pull consumer shared by every
 * worker (competing consumers).
 *
 * Invariants:
 * 1. `enqueue` resolves only on the server's PubAck: the message is stored (or was a duplicate
 *    of a stored one, by `Nats-Msg-Id`).
 * 2. `fetch` costs one pull request when messages are ready (a `no_wait` request for the whole
 *    batch). Only an empty queue makes it wait, and then for the first message alone (batch 1),
 *    which it returns as soon as it arrives: a waiting request for the whole batch would hold the
 *    first message until the batch filled or expired, and topping it up with another request
 *    would hold it for one more round trip. Whatever arrived behind it goes to the next fetch,
 *    which a claim loop makes at once.
 * 3. `fetch` never outlives `expiresMs` by more than a backstop, also when max_ack_pending is
 *    reached, and returns what it has when its signal aborts or the transport closes; a message
 *    that lands after that is nakked at once (see pull-request.ts), never left to the ack wait.
 * 4. `ack` is a double ack: it resolves when the server confirms it, so "acked" means the server
 *    will not redeliver. Acking or nakking twice sends once.
 * 5. Order: per priority lane one stream, one consumer; a lane's messages are delivered in stream
 *    order (redeliveries aside), which keeps the order of messages with the same key and level.
 * 6. Priorities: a lane per level (layout.ts); the transport's fetch chooses among them with
 *    PriorityLanes, and the functions here work on one lane. A message without a priority goes to
 *    the `normal` lane, the runs stream and subject of every earlier release, unchanged.
 */
import type { Msg } from '@nats-io/transport-node';
import { nanos } from '@nats-io/transport-node';
import {
  DEFAULT_RUN_PRIORITY,
  PriorityLanes,
  laneFor,
  laneLevels,
  type BacklogDetail,
  type BacklogPart,
  type Delivery,
  type EnqueueOptions,
  type FetchOptions,
  type RunPriority,
  type RunQueue,
} from '@baton/core/adapter';
import type { TransportContext } from './context.js';
import type { RunLane } from './layout.js';
import { ackInfoOf } from './delivery-info.js';
import { assertFits, fromNatsHeaders, toNatsHeaders } from './messages.js';
import { pullBatch, type PullRequest } from './pull-request.js';

/**
 * How long past its own expiry a waiting pull request may stay unanswered before the transport
 * gives up on it (the server sends 408 at the expiry; silence means it is unreachable).
 */
const BACKSTOP_GRACE_MS = 1_000;
/**
 * A waiting pull request expires on the server this long before the caller's deadline, and one
 * no_wait request covers the rest. Why: nats-server 2.9 drops a waiting request that has just
 * expired but not yet been answered with 408 when a redelivery becomes due in the same instant,
 * and then mishandles the redelivery (it reports the wrong delivery count and delivers another
 * pending message twice). A fetch that starts right after a delivery and waits exactly the ack
 * wait (as a claim loop with fetch wait = ack wait does) would meet that instant every time;
 * ending the server-side wait early keeps the two apart. Redeliveries arriving then are picked
 * up by the next fetch.
 */
const EXPIRY_MARGIN_MS = 25;
/**
 * How long a no_wait request may go unanswered. nats-server 2.9 answers one at once (messages, or
 * 404 when the queue is empty) except when messages are pending but max_ack_pending is reached:
 * then it holds the request, without expiry, until a slot frees. Past this, the fetch takes the
 * silence for "nothing deliverable now" and goes on to a request that does expire.
 */
const NO_WAIT_TIMEOUT_MS = 500;
/**
 * A no_wait request that delivered part of its batch and then reached max_ack_pending is not
 * answered either; normally the 408 follows the last message at once, so a short silence after a
 * message means the request is stuck there.
 */
const QUIET_MS = 20;
/**
 * How long a priority lane found empty is left unasked while another lane supplies the fetches: a
 * run started at a higher level behind a busy lower one waits at most about this much longer to be
 * claimed than on an idle queue (docs/priorities.md).
 */
const EMPTY_LANE_RECHECK_MS = 50;
const ACK = '+ACK';
const NAK = '-NAK';

/** Publishes a run message; see invariant 1. */
export async function enqueueRunMessage(
  context: TransportContext,
  data: Uint8Array,
  options: EnqueueOptions = {},
): Promise<void> {
  const { session, layout } = context;
  const priority = laneFor(
    options.priority,
    context.options.priorityLanes,
    'nats transport: enqueue',
    'priorityLanes (BATON_NATS_PRIORITY_LANES=true)',
  );
  const subject = layout.runLanes[priority].subject;
  const h = toNatsHeaders(
    options.headers,
    options.msgId === undefined ? {} : { 'Nats-Msg-Id': options.msgId },
  );
  assertFits(session.nc, `run message for ${subject}`, data, h);
  try {
    await session.publisher.publish(subject, data, h);
  } catch (err) {
    throw context.toError('enqueue', err);
  }
}

/**
 * Pulls up to `max` run messages from one lane; see invariants 2 and 3. `foundEmpty`: the caller
 * found the lane empty an instant ago, so the first `no_wait` request is left out and the fetch goes
 * straight to its waiting request (which still returns at once a message that arrived meanwhile).
 */
export async function fetchRunMessages(
  context: TransportContext,
  lane: RunLane,
  options: FetchOptions,
  foundEmpty = false,
): Promise<Delivery[]> {
  const { max, expiresMs } = options;
  if (max < 1) return [];
  const signal =
    options.signal === undefined ? context.closing : AbortSignal.any([options.signal, context.closing]);
  if (signal.aborted) return [];
  const noWaitTimeoutMs = Math.min(NO_WAIT_TIMEOUT_MS, context.options.requestTimeoutMs);
  const ready = (batch: number): Promise<Pulled> =>
    pull(context, lane, { batch, noWait: true, signal, timeoutMs: noWaitTimeoutMs, quietMs: QUIET_MS });
  try {
    const now = foundEmpty && expiresMs > 0 ? { deliveries: [], answered: true } : await ready(max);
    if (now.deliveries.length > 0 || expiresMs <= 0 || signal.aborted) return now.deliveries;
    // Unanswered: max_ack_pending is reached. Only the expiring request below is worth making.
    const blocked = !now.answered;
    const serverWaitMs = expiresMs >= 4 * EXPIRY_MARGIN_MS ? expiresMs - EXPIRY_MARGIN_MS : expiresMs;
    const first = await pull(context, lane, {
      batch: 1,
      noWait: false,
      expiresMs: serverWaitMs,
      signal,
      timeoutMs: serverWaitMs + BACKSTOP_GRACE_MS,
    });
    if (signal.aborted || blocked) return first.deliveries;
    if (first.deliveries.length === 0) {
      return serverWaitMs < expiresMs ? (await ready(max)).deliveries : [];
    }
    return first.deliveries;
  } catch (err) {
    // Closing: a fetch returns what it has rather than the noise of the connection going away.
    if (signal.aborted) return [];
    throw context.toError('fetch', err);
  }
}

interface Pulled {
  deliveries: Delivery[];
  answered: boolean;
}

async function pull(
  context: TransportContext,
  lane: RunLane,
  request: Omit<PullRequest, 'subject' | 'onLate'>,
): Promise<Pulled> {
  const { session } = context;
  const result = await pullBatch(session.nc, session.permissions, {
    ...request,
    subject: `$JS.API.CONSUMER.MSG.NEXT.${lane.stream}.${lane.consumer}`,
    // Handed out to nobody: back to the queue at once.
    onLate: (msg) => {
      try {
        if (msg.reply !== undefined) session.nc.publish(msg.reply, NAK);
      } catch {
        // Closed or draining: the ack wait returns the message instead.
      }
    },
  });
  context.track(result.settled);
  return { deliveries: result.messages.map((msg) => toDelivery(context, msg)), answered: result.answered };
}

function toDelivery(context: TransportContext, msg: Msg): Delivery {
  const reply = msg.reply ?? '';
  let settlement: Promise<void> | undefined;
  // One answer per delivery (invariant 4): the first ack or nak wins, later calls share its fate.
  const settle = (operation: string, body: string): Promise<void> => {
    context.assertOpen(operation);
    // A failed attempt (timeout during an outage) may be retried; a confirmed one is final.
    settlement ??= confirm(context, operation, reply, body).catch((err: unknown) => {
      settlement = undefined;
      throw err;
    });
    return settlement;
  };
  return {
    // Copied: the caller may keep or change it, and the client may reuse its read buffer.
    data: new Uint8Array(msg.data),
    headers: fromNatsHeaders(msg.headers),
    deliveryCount: ackInfoOf(msg.reply).deliveryCount,
    ack: () => settle('ack', ACK),
    // A plain publish: no request, timer or error object per message. Lost, the message is
    // redelivered after the ack wait, and whoever gets it finds the run claimed or finished.
    ackUnconfirmed: () => {
      if (settlement !== undefined) return;
      try {
        context.assertOpen('ack');
        context.session.nc.publish(reply, ACK);
        settlement = Promise.resolve();
      } catch {
        // Closed or draining: the ack wait returns the message instead.
      }
    },
    nak: (delayMs?: number) =>
      settle(
        'nak',
        delayMs !== undefined && delayMs > 0 ? `${NAK} ${JSON.stringify({ delay: nanos(delayMs) })}` : NAK,
      ),
  };
}

/** Sends an ack or nak as a request: the server's reply confirms it was applied. */
async function confirm(
  context: TransportContext,
  operation: string,
  reply: string,
  body: string,
): Promise<void> {
  try {
    await context.session.nc.request(reply, body, { timeout: context.options.requestTimeoutMs });
  } catch (err) {
    throw context.toError(operation, err);
  }
}

/**
 * The lanes' count of messages not yet delivered (`num_pending` summed), or undefined when the
 * server does not answer within `timeoutMs` or a request fails: a metric reading that misses is
 * left out, never guessed.
 */
export async function consumerPending(
  context: TransportContext,
  timeoutMs: number,
): Promise<number | undefined> {
  return (await consumerBacklog(context, timeoutMs))?.total;
}

/**
 * The backlog by lane consumer: `num_pending` (not yet delivered) and `num_ack_pending`
 * (delivered, not yet acked), from one consumer-info request per lane, made together and bounded
 * by `timeoutMs`; undefined when one fails or is late. The `normal` lane's part is named by its
 * consumer and always listed, as before priorities; the `high` and `low` lanes' parts
 * (`<stream>/<consumer>`) only when they hold anything.
 */
export async function consumerBacklog(
  context: TransportContext,
  timeoutMs: number,
): Promise<BacklogDetail | undefined> {
  const { jsm } = context.session;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    const info = Promise.all(
      laneLevels(context.options.priorityLanes).map(async (priority): Promise<BacklogPart | undefined> => {
        const lane = context.layout.runLanes[priority];
        const consumer = await jsm.consumers.info(lane.stream, lane.consumer);
        const part = {
          name: priority === DEFAULT_RUN_PRIORITY ? lane.consumer : `${lane.stream}/${lane.consumer}`,
          pending: consumer.num_pending,
          ackPending: consumer.num_ack_pending,
        };
        return priority === DEFAULT_RUN_PRIORITY || part.pending + part.ackPending > 0 ? part : undefined;
      }),
    )
      .then((found): BacklogDetail => {
        const parts = found.filter((part): part is BacklogPart => part !== undefined);
        return { total: parts.reduce((sum, part) => sum + part.pending, 0), parts };
      })
      .catch(() => undefined);
    return await Promise.race([info, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The transport's run queue: the functions above over the connected transport's context. */
export class NatsRunQueue implements RunQueue {
  /**
   * The priority lanes. Asking an empty lane costs a round trip, so a lane found empty is skipped
   * for {@link EMPTY_LANE_RECHECK_MS} while another lane supplies the fetch: a worker busy with runs
   * of one level pays for the other lanes a few times a second, not on every fetch.
   */
  private readonly lanes: PriorityLanes;

  /**
   * The transport's lifecycle guard wraps this queue and makes the closed check on entry, so
   * `connected` gives the connected transport's context without another (BATON_NOT_CONNECTED
   * before connect()). `open` checks again: a lane's fetch may start after the claim cycle awaited
   * another lane, when close() may have come. `peek` gives the context without throwing, for the
   * backlog, which answers undefined instead.
   */
  constructor(
    private readonly connected: (operation: string) => TransportContext,
    private readonly open: (operation: string) => TransportContext,
    private readonly peek: () => TransportContext | undefined,
    private readonly priorityLanes: boolean,
  ) {
    const lane = (level: RunPriority) => (options: FetchOptions, foundEmpty?: boolean) => {
      const context = this.open('runQueue.fetch');
      return fetchRunMessages(context, context.layout.runLanes[level], options, foundEmpty);
    };
    this.lanes = new PriorityLanes(
      { high: lane('high'), normal: lane('normal'), low: lane('low') },
      EMPTY_LANE_RECHECK_MS,
    );
  }

  /** Ends waiting fetches (the transport is closing). */
  close(): void {
    this.lanes.close();
  }

  enqueue(data: Uint8Array, options?: EnqueueOptions): Promise<void> {
    return enqueueRunMessage(this.connected('runQueue.enqueue'), data, options);
  }

  /**
   * Takes from the priority lanes by the claim cycle (priority-lanes.ts; see {@link lanes}), or,
   * without `priorityLanes`, from the runs stream alone as before priorities.
   */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const context = this.connected('runQueue.fetch');
    if (!this.priorityLanes) return fetchRunMessages(context, context.layout.runLanes.normal, options);
    return this.lanes.fetch(options);
  }

  /**
   * The lane consumers' `num_pending`, summed: messages of the run streams not yet delivered to
   * any worker. Messages delivered and not yet acked (being claimed, or waiting for their ack wait
   * to run out) are not counted. One consumer-info request per lane, together bounded by `timeoutMs`.
   */
  async backlog(timeoutMs: number): Promise<number | undefined> {
    const context = this.peek();
    if (context === undefined || context.closing.aborted) return undefined;
    return consumerPending(context, timeoutMs);
  }

  /**
   * One part per lane consumer (the `normal` one always, the others when they hold anything): its
   * `num_pending` (what {@link backlog} counts) and its `num_ack_pending` (delivered to a worker,
   * not yet acked). One consumer-info request per lane.
   */
  async backlogDetail(timeoutMs: number): Promise<BacklogDetail | undefined> {
    const context = this.peek();
    if (context === undefined || context.closing.aborted) return undefined;
    return consumerBacklog(context, timeoutMs);
  }
}
