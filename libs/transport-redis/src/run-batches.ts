/**
 * The run queue's calls in batches (bull-batch.ts has the scripts): a fetch takes up to its `max`
 * jobs in one script call, and the acks of a lane are gathered and sent as one call.
 *
 * Invariants:
 * 1. Acks are gathered for one event loop turn (every ack issued before the next `setImmediate`),
 *    and, while a finish call is in flight, until it returns; then they go as one call of at
 *    most {@link MAX_FINISH_JOBS} jobs. At most one finish call per lane is in flight, so a burst of
 *    acks costs Redis a few calls, not one each.
 * 2. Each ack's own wait stays bounded by `requestTimeoutMs` (its caller wraps it in the context's
 *    call), and so is each finish call, so a slow call never holds the acks behind it for longer.
 *    A finish call that failed or timed out rejects each of its acks (the worker lets such a
 *    message come back); if it still lands later it completes the jobs as the acks meant to,
 *    and a job whose finish never lands returns after the ack wait, to be acked by its receiver.
 * 3. The take and finish scripts run on the lane's BullMQ connection (lane.batches), not the
 *    command connection the journal uses. A take whose reply comes after its bound hands its jobs
 *    back to wait (handBack), as run-queue.ts invariant 5 asks.
 */
import type { Job } from 'bullmq';
import { FINISH_ARGS, FINISH_KEYS, TAKE_KEYS } from './bull-batch.js';
import type { RunLane, TransportContext } from './context.js';

/** Most jobs one finish call completes: bounds how long one script holds Redis. */
export const MAX_FINISH_JOBS = 64;
/** Most jobs one take call moves to active (the worker asks for 64 at most). */
export const MAX_TAKE_JOBS = 64;

/** A job the take moved to active, with the lock token it holds it by. */
export interface Taken {
  readonly job: Job;
  readonly token: string;
}

/** The ids (and token) a take call moved to active, before they are made into Jobs. */
export interface TakeReply {
  readonly token: string;
  readonly jobs: ReadonlyArray<readonly [fields: string[], jobId: string]>;
}

/** Moves up to `max` jobs of `lane` to active in one call under a new `token` (bull-batch.ts). */
export function takeJobs(
  context: TransportContext,
  lane: RunLane,
  max: number,
  token: string,
): Promise<TakeReply> {
  const worker = lane.worker;
  const keys = worker.keys;
  const takeKeys = [
    keys.wait,
    keys.active,
    keys.prioritized,
    keys.events,
    keys.stalled,
    keys.limiter,
    keys.delayed,
    keys.paused,
    keys.meta,
    keys.pc,
    keys.marker,
  ] as string[];
  if (takeKeys.length !== TAKE_KEYS || takeKeys.some((key) => typeof key !== 'string')) {
    throw new Error("redis transport: BullMQ's queue keys are not the ones the batch take expects");
  }
  const args = [
    keys[''] as string,
    Date.now(),
    token,
    worker.opts.lockDuration ?? context.options.ackWaitMs,
    worker.opts.name ?? '',
    Math.min(max, MAX_TAKE_JOBS),
  ];
  return lane.batches('bull-take', takeKeys, args).then((reply) => ({
    token,
    jobs: reply as TakeReply['jobs'],
  }));
}

/** Hands back, by id, what a take moved to active but no caller received (a late reply). */
export function handBack(context: TransportContext, lane: RunLane, reply: TakeReply): void {
  for (const [, jobId] of reply.jobs) {
    context.track(lane.worker.backend.moveJobFromActiveToWait(jobId, reply.token).catch(() => undefined));
  }
}

interface Waiting {
  readonly keys: readonly string[];
  readonly args: ReadonlyArray<string | number | Buffer>;
  resolve(code: number): void;
  reject(err: unknown): void;
}

/** One lane's gathered acks (invariant 1). */
export class FinishBatches {
  private waiting: Waiting[] = [];
  private busy = false;

  constructor(
    private readonly context: TransportContext,
    private readonly lane: RunLane,
  ) {}

  /**
   * Completes `job` (BullMQ's moveToCompleted, removing the job as the job asked) in the lane's
   * next finish call; resolves with BullMQ's code for it: 0, or negative (lock lost, not active…).
   */
  complete(job: Job, token: string): Promise<number> {
    const backend = this.lane.worker.backend;
    // As job.moveToCompleted(null, token, false) builds them: the job's own removeOnComplete, and
    // when it has none (a job another producer added) the worker's.
    const all = backend.moveToCompletedArgs(
      job,
      JSON.stringify(null),
      job.opts.removeOnComplete as Parameters<typeof backend.moveToCompletedArgs>[2],
      token,
      false,
    );
    if (all.length !== FINISH_KEYS + FINISH_ARGS) {
      return Promise.reject(
        new Error(
          "redis transport: BullMQ's moveToFinished arguments are not the ones the batch finish expects",
        ),
      );
    }
    // An absent argument goes as '' (what ioredis sends for it when BullMQ makes the call).
    const parts = all.map((part) => part ?? '') as Array<string | number | Buffer>;
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({
        keys: parts.slice(0, FINISH_KEYS) as string[],
        args: parts.slice(FINISH_KEYS),
        resolve,
        reject,
      });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => void this.send());
      }
    });
  }

  private async send(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_FINISH_JOBS);
      try {
        const codes = (await this.context.call('ack', () =>
          this.lane.batches(
            'bull-finish',
            batch.flatMap((w) => w.keys),
            batch.flatMap((w) => w.args),
          ),
        )) as unknown[];
        batch.forEach((w, i) => w.resolve(Number(codes[i])));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.busy = false;
  }
}
