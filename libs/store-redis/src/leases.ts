/**
 * LeaseStore on Redis (`store.leases`). The scripts do the work; this module builds their keys and reads replies.
 * Each operation is one round trip (one EVALSHA; EVAL for a script's first call on a connection,
 * and once more after the server lost its script cache).
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  AcquireResult,
  LeaseInfo,
  LeaseState,
  LeaseStore,
  OperationsOf,
  RenewRequest,
  RenewResult,
  SuspendRequest,
  SuspendResult,
} from '@baton/core/adapter';
import { pipelineResults, str, type StoreContext } from './context.js';

async function acquire(
  ctx: StoreContext,
  runId: string,
  owner: string,
  ttlMs: number,
): Promise<AcquireResult> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'acquire-lease',
    [keys.lease(runId), keys.held, keys.timers, keys.run(runId), keys.cancel(runId)],
    [keys.prefix, runId, owner, ttlMs],
  )) as unknown[];
  return acquireReply(reply);
}

/** Reads take_lease's reply (prelude.lua). */
export function acquireReply(reply: unknown[]): AcquireResult {
  switch (reply[0]) {
    case 'ok':
      return { ok: true, epoch: Number(reply[1]), cancelRequested: reply[2] === 1 };
    case 'held':
      return { ok: false, reason: 'held', owner: str(reply[1]), expiresAt: Number(reply[2]) };
    case 'paused':
      return { ok: false, reason: 'paused' };
    default:
      return { ok: false, reason: 'finished' };
  }
}

/** One script call for the whole batch: one round trip per worker and heartbeat. */
async function renew(
  ctx: StoreContext,
  requests: readonly RenewRequest[],
  ttlMs: number,
): Promise<RenewResult[]> {
  if (requests.length === 0) return [];
  const { keys } = ctx;
  const scriptKeys = [keys.held];
  const args: (string | number)[] = [ttlMs];
  for (const { runId, epoch } of requests) {
    scriptKeys.push(keys.lease(runId), keys.cancel(runId));
    args.push(runId, epoch);
  }
  const reply = (await ctx.run('renew-leases', scriptKeys, args)) as number[];
  return requests.map(({ runId }, i) => ({
    runId,
    ok: reply[3 * i] === 1,
    cancelRequested: reply[3 * i + 1] === 1,
    ...(reply[3 * i + 2] === 1 && { pauseRequested: true }),
  }));
}

async function release(ctx: StoreContext, runId: string, epoch: number): Promise<boolean> {
  const { keys } = ctx;
  const reply = await ctx.run(
    'release-lease',
    [keys.lease(runId), keys.held, keys.timers],
    [keys.prefix, runId, epoch],
  );
  return reply === 1;
}

async function reapExpired(ctx: StoreContext, limit: number, reclaimAfterMs: number): Promise<string[]> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'reap-expired-leases',
    [keys.held],
    [keys.prefix, Math.floor(limit), reclaimAfterMs],
  )) as unknown[];
  return reply.map(str);
}

/** Lease hash and cancel flag in one pipelined round trip (a read: no atomicity needed). */
async function get(ctx: StoreContext, runId: string): Promise<LeaseInfo | undefined> {
  const { keys, redis } = ctx;
  const [fields, cancelled, timer] = pipelineResults(
    await redis
      .pipeline()
      .hmget(keys.lease(runId), 'epoch', 'state', 'owner', 'exp', 'pause', 'pause_reason', 'wait')
      .get(keys.cancel(runId))
      .zscore(keys.timers, runId)
      .exec(),
  ) as [(string | null)[], string | null, string | null];
  const [epoch, state, owner, exp, pause, pauseReason, wait] = fields;
  if (epoch === null || epoch === undefined) return undefined;
  return {
    runId,
    epoch: Number(epoch),
    owner: owner ?? null,
    state: state as LeaseState,
    expiresAt: state === 'held' && exp !== null && exp !== undefined ? Number(exp) : null,
    cancelRequested: cancelled !== null,
    // The flag is '1' or '1|<reason>' (request-cancel.lua).
    ...(cancelled?.startsWith('1|') === true && { cancelReason: cancelled.slice(2) }),
    // A request is only news while the run is held (the finish, op_finish_run, drops it too).
    ...(state === 'held' && pause !== null && pause !== undefined && { pauseRequested: true }),
    ...((state === 'held' || state === 'paused') &&
      pauseReason !== null &&
      pauseReason !== undefined && { pauseReason }),
    ...(state === 'suspended' && {
      // suspend-run.lua keeps the names as JSON in `wait`, the timer in the timers zset.
      waitingFor: {
        signals: wait === null || wait === undefined ? [] : (JSON.parse(wait) as string[]),
        wakeAt: timer === null ? null : Number(timer),
      },
    }),
  };
}

async function suspend(ctx: StoreContext, request: SuspendRequest): Promise<SuspendResult> {
  const { keys } = ctx;
  const { runId, epoch } = request;
  const reply = await ctx.run(
    'suspend-run',
    [keys.lease(runId), keys.held, keys.timers, keys.run(runId), keys.cancel(runId), keys.signalNames(runId)],
    [
      keys.prefix,
      runId,
      epoch,
      request.wakeAt === null ? '' : request.wakeAt,
      JSON.stringify(request.signals),
      request.signals.length,
      ...request.signals,
      ...request.consumedSignalIds,
    ],
  );
  switch (reply) {
    case 'ok':
      return { ok: true };
    case 'paused':
      return { ok: true, paused: true };
    case 'signal-pending':
    case 'cancel-requested':
      return { ok: false, reason: reply };
    default:
      throw new FencedWriteError(runId, epoch, 'leases.suspend');
  }
}

/** The server clock: the same TIME the scripts compare expiries against. */
async function now(ctx: StoreContext): Promise<number> {
  const [seconds, micros] = await ctx.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** record-claim-failure.lua: the failed claims in a row, or FencedWriteError. */
async function recordClaimFailure(ctx: StoreContext, runId: string, epoch: number): Promise<number> {
  const reply = Number(await ctx.run('record-claim-failure', [ctx.keys.lease(runId)], [epoch]));
  if (reply < 0) throw new FencedWriteError(runId, epoch, 'leases.recordClaimFailure');
  return reply;
}

/** `store.leases` on the connection. */
export const leases: OperationsOf<StoreContext, LeaseStore> = {
  acquire,
  renew,
  release,
  suspend,
  reapExpired,
  get,
  now,
  recordClaimFailure,
};
