/**
 * The run queue on a BullMQ queue (`<prefix>:runs:*`): enqueue adds a job, fetch takes jobs in
 * batches, one script call moving up to `max` of them to active with BullMQ's own moveToActive per
 * job (bull-batch.ts, run-batches.ts; the worker is in manual mode, no processor), ack completes
 * the job (and removes it) in the lane's next batch of acks, BullMQ's moveToFinished per job, nak
 * moves it back to wait or, with a delay, to BullMQ's delayed set (one call each: naks are rare).
 *
 * Invariants:
 * 1. Baton's leases, in the store, decide who runs a run; BullMQ only delivers messages. A job's
 *    lock is the message's ack wait (`lockDuration = ackWaitMs`), never renewed: the worker acks a
 *    message as soon as it holds the run's lease. If the lock runs out first, BullMQ's stalled-job
 *    check moves the job back to wait and another worker receives it; that worker's lease claim
 *    is refused while the first one holds the run. A stalled check causes a second delivery,
 *    never a second owner.
 * 2. BullMQ never fails a job on its own: `maxStalledCount` is unbounded in practice and
 *    `maxStartedAttempts` unset, and the transport never calls moveToFailed. The bound on
 *    redeliveries is Baton's: the worker dead-letters a message delivered `maxDeliveries` times,
 *    with its reason, so a poison message ends in the dead letters, not in BullMQ's failed set.
 * 3. `deliveryCount` is the job's `attemptsStarted`: BullMQ counts every move to active, whether
 *    the job came from wait (first delivery, a nak), from delayed (a nak with delay) or back from
 *    a stall; a batch take moves each job by BullMQ's script, so it counts the same.
 * 4. nak() moves the job to the head of wait (moveToWait), nak(delay) to delayed until
 *    now + delay (moveToDelayed, promoted by the next fetch after it is due). An ack or nak whose
 *    lock had already run out (the job stalled and went back, perhaps to another worker) changes
 *    nothing and resolves: that next delivery is its receiver's to settle. In a batch of acks each
 *    job has its own outcome: one lost lock neither fails nor holds up the others.
 * 5. Every call through BullMQ is bounded by `requestTimeoutMs` (connection.ts, invariant 2), and
 *    so is each ack's wait for its batch. The jobs that a timed-out fetch still takes later are
 *    handed back (moved to wait), so they wait no ack wait.
 * 6. Priorities: with `priorityLanes` each level is a queue of its own (layout.ts); the transport's
 *    fetch chooses among them with PriorityLanes, and the functions here work on one lane. A
 *    message without a priority goes to the `normal` lane, the `runs` queue, as before; without
 *    `priorityLanes` a start at `high` or `low` is refused.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { ConfigError } from '@baton/core';
import {
  PriorityLanes,
  bufferView,
  laneFor,
  type BacklogDetail,
  type BacklogPart,
  type Delivery,
  type EnqueueOptions,
  type FetchOptions,
  type RunPriority,
  type RunQueue,
} from '@baton/core/adapter';
import { withTimeout } from './connection.js';
import type { RunLane, TransportContext } from './context.js';
import { FinishBatches, MAX_TAKE_JOBS, handBack, takeJobs } from './run-batches.js';

/** A job's data as the transport writes it: the message's bytes (base64) and headers. */
interface RunJobData {
  d: string;
  h: Record<string, string>;
}

/** The header whose value names the job in BullMQ tools (Bull Board): `start`, `resume`, … */
const KIND_HEADER = 'baton-kind';
/** A job that did not come from this transport is delivered with this header naming it. */
export const FOREIGN_JOB_HEADER = 'baton-bullmq-job';
/** What BullMQ says when a job's lock is gone or the job is no longer active (invariant 4). */
const LOCK_LOST =
  /^(Missing key for job|Missing lock for job|Lock mismatch for job|Job \S+ is not in the active state)/;

/** Adds one job; resolves once Redis has it. A `msgId` suppresses its repeats for the duplicate window. */
export async function enqueueRunMessage(
  context: TransportContext,
  data: Uint8Array,
  options: EnqueueOptions = {},
): Promise<void> {
  const priority = laneFor(
    options.priority,
    context.options.priorityLanes,
    'redis transport: enqueue',
    'priorityLanes (BATON_REDIS_BUS_PRIORITY_LANES=true)',
  );
  const lane = context.lanes[priority] ?? context.normal;
  const headers = checkHeaders(options.headers ?? {});
  const payload: RunJobData = { d: Buffer.from(bufferView(data)).toString('base64'), h: headers };
  await context.call('enqueue', () =>
    lane.queue.add(headers[KIND_HEADER] ?? 'run', payload, {
      removeOnComplete: true,
      ...(options.msgId !== undefined && {
        deduplication: { id: options.msgId, ttl: context.options.duplicateWindowMs },
      }),
    }),
  );
}

function checkHeaders(headers: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') {
      throw new ConfigError(
        `redis transport: header ${JSON.stringify(name)} has a ${typeof value} value; headers are strings`,
      );
    }
  }
  return { ...headers };
}

/**
 * Takes up to `max` jobs from one lane. While it is empty it waits for BullMQ's marker of a new job,
 * and asks again every `pollMs` in any case, until `expiresMs` or an abort.
 */
export async function fetchRunMessages(
  context: TransportContext,
  lane: RunLane,
  options: FetchOptions,
): Promise<Delivery[]> {
  const max = Math.max(1, Math.floor(options.max));
  const deadline = Date.now() + Math.max(0, options.expiresMs);
  const stopped = () => options.signal?.aborted === true || context.closing.aborted;
  const batch: Delivery[] = [];
  for (;;) {
    while (batch.length < max && !stopped()) {
      const want = Math.min(max - batch.length, MAX_TAKE_JOBS);
      const taking = takeJobs(context, lane, want, randomUUID());
      // BullMQ's own step after its moveToActive, inside the same bound: a job it gives no Job for
      // (a job scheduler's failure) stays active and comes back by the stalled check, as with
      // getNextJob.
      const making = taking.then(async (reply) => {
        const jobs: Job[] = [];
        for (const [fields, jobId] of reply.jobs) {
          const job = await lane.worker.jobFromTaken(fields, jobId, reply.token).catch(() => undefined);
          if (job !== undefined) jobs.push(job);
        }
        return { reply, jobs };
      });
      let taken: Awaited<typeof making>;
      try {
        taken = await context.call('fetch', () => making);
      } catch (err) {
        // Invariant 5: whatever the timed-out call still takes goes back at once.
        void taking.then((late) => handBack(context, lane, late)).catch(() => undefined);
        if (batch.length > 0) return batch;
        throw err;
      }
      const { reply, jobs } = taken;
      if (context.closing.aborted) {
        // Taken while closing: hand it back rather than deliver to a caller that is going away.
        handBack(context, lane, reply);
        return batch;
      }
      for (const job of jobs) batch.push(toDelivery(context, lane, job, reply.token));
      // Fewer than asked: the lane is empty (or paused, rate limited) for now.
      if (reply.jobs.length < want) break;
    }
    const remaining = deadline - Date.now();
    if (batch.length > 0 || stopped() || remaining <= 0) return batch;
    // Whichever comes first: BullMQ's marker (a job was added: marker-watch.ts) or the next poll.
    await Promise.race([
      pause(Math.min(context.options.pollMs, remaining), [options.signal, context.closing]),
      lane.markers.next(),
    ]);
  }
}

/** Each lane's gathered acks (run-batches.ts), made on its first ack. */
const finishes = new WeakMap<RunLane, FinishBatches>();

function finishesOf(context: TransportContext, lane: RunLane): FinishBatches {
  let batches = finishes.get(lane);
  if (batches === undefined) {
    batches = new FinishBatches(context, lane);
    finishes.set(lane, batches);
  }
  return batches;
}

/** Completes the job in the lane's next finish call; a negative code becomes BullMQ's error for it. */
async function complete(context: TransportContext, lane: RunLane, job: Job, token: string): Promise<void> {
  const code = await finishesOf(context, lane).complete(job, token);
  if (code < 0) {
    throw lane.worker.backend.finishedErrors({
      code,
      jobId: job.id ?? '',
      command: 'moveToFinished',
      state: 'active',
    });
  }
}

function toDelivery(context: TransportContext, lane: RunLane, job: Job, token: string): Delivery {
  const { data, headers } = messageOf(job);
  let settled: Promise<void> | undefined;
  // One settlement per delivery: a second ack or nak returns the first one's outcome.
  const settle = (operation: string, move: () => Promise<unknown>): Promise<void> => {
    settled ??= context.call(operation, async () => {
      try {
        await move();
      } catch (err) {
        if (!(err instanceof Error && LOCK_LOST.test(err.message))) throw err;
      }
    });
    return settled;
  };
  return {
    data,
    headers,
    deliveryCount: Math.max(1, job.attemptsStarted),
    ack: () => settle('ack', () => complete(context, lane, job, token)),
    nak: (delayMs?: number) =>
      settle('nak', () =>
        delayMs !== undefined && delayMs > 0
          ? job.moveToDelayed(Date.now() + Math.ceil(delayMs), token)
          : job.moveToWait(token),
      ),
  };
}

/**
 * The message a job carries. A job someone else added to the queue (by hand, a BullMQ tool) is
 * delivered as its JSON data with a header naming it: the worker cannot parse it, so it goes to
 * the dead letters with that reason, and the queue moves on.
 */
function messageOf(job: Job): { data: Uint8Array; headers: Record<string, string> } {
  const payload = job.data as Partial<RunJobData> | null;
  if (
    payload !== null &&
    typeof payload === 'object' &&
    typeof payload.d === 'string' &&
    payload.h !== null &&
    typeof payload.h === 'object'
  ) {
    return { data: new Uint8Array(Buffer.from(payload.d, 'base64')), headers: { ...payload.h } };
  }
  return {
    data: new Uint8Array(Buffer.from(JSON.stringify(job.data ?? null))),
    headers: { [FOREIGN_JOB_HEADER]: `${job.name}#${job.id ?? '?'}` },
  };
}

/** Resolves after `ms`, or as soon as any of the signals aborts. */
function pause(ms: number, signals: Array<AbortSignal | undefined>): Promise<void> {
  return new Promise((resolve) => {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    const done = (): void => {
      clearTimeout(timer);
      for (const signal of live) signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of live) signal.addEventListener('abort', done, { once: true });
    if (live.some((s) => s.aborted)) done();
  });
}

/**
 * The counts of each lane as one part: `pending` is what waits to be taken (BullMQ's wait,
 * prioritized jobs: what a KEDA BullMQ trigger counts), `ackPending` what was delivered and not yet
 * acked (active) or nakked with a delay (delayed). The `normal` lane's part is always listed, a
 * `high` or `low` lane's only while it holds anything. Undefined when Redis does not answer within
 * `timeoutMs`.
 */
export async function queueBacklog(
  context: TransportContext,
  timeoutMs: number,
): Promise<BacklogDetail | undefined> {
  try {
    const parts = await withTimeout(
      Promise.all(
        Object.values(context.lanes).map(async (lane): Promise<BacklogPart | undefined> => {
          const counts = await lane.queue.getJobCounts('wait', 'prioritized', 'active', 'delayed');
          const count = (name: string) => counts[name] ?? 0;
          const part = {
            name: lane.name,
            pending: count('wait') + count('prioritized'),
            ackPending: count('active') + count('delayed'),
          };
          return lane === context.normal || part.pending + part.ackPending > 0 ? part : undefined;
        }),
      ),
      timeoutMs,
      { url: context.options.displayUrl, operation: 'backlog' },
    );
    const listed = parts.filter((part): part is BacklogPart => part !== undefined);
    return { total: listed.reduce((sum, part) => sum + part.pending, 0), parts: listed };
  } catch {
    return undefined;
  }
}

/** The transport's run queue: the functions above over the connected transport's context. */
export class RedisRunQueue implements RunQueue {
  /**
   * With `priorityLanes`: the lanes taken by the claim cycle (priority-lanes.ts). Each lane's fetch
   * waits on its own marker, so an empty lane costs one script call per `pollMs` while it waits.
   */
  private readonly lanes = new PriorityLanes({
    high: (options) => this.fetchLane('high', options),
    normal: (options) => this.fetchLane('normal', options),
    low: (options) => this.fetchLane('low', options),
  });

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
  ) {}

  /** Ends waiting fetches (the transport is closing). */
  close(): void {
    this.lanes.close();
  }

  enqueue(data: Uint8Array, options?: EnqueueOptions): Promise<void> {
    return enqueueRunMessage(this.connected('runQueue.enqueue'), data, options);
  }

  /**
   * Takes from the priority lanes by the claim cycle with `priorityLanes`, or from the `runs`
   * queue alone as before priorities.
   */
  async fetch(options: FetchOptions): Promise<Delivery[]> {
    const context = this.connected('runQueue.fetch');
    if (!this.priorityLanes) return fetchRunMessages(context, context.normal, options);
    return this.lanes.fetch(options);
  }

  private fetchLane(level: RunPriority, options: FetchOptions): Promise<Delivery[]> {
    const context = this.open('runQueue.fetch');
    const lane = context.lanes[level];
    return lane === undefined ? Promise.resolve([]) : fetchRunMessages(context, lane, options);
  }

  /** BullMQ's waiting and prioritized jobs of every lane (queueBacklog). */
  async backlog(timeoutMs: number): Promise<number | undefined> {
    return (await this.backlogDetail(timeoutMs))?.total;
  }

  /** One part per lane: `pending` as {@link backlog}, `ackPending` its active and delayed jobs. */
  async backlogDetail(timeoutMs: number): Promise<BacklogDetail | undefined> {
    const context = this.peek();
    if (context === undefined || context.closing.aborted) return undefined;
    return queueBacklog(context, timeoutMs);
  }
}
