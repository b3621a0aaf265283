/**
 * RunControlStore on Redis (`store.control`): cancel requests and the owner's closing of them,
 * pause and resume; one script call each. The cancel flag is a key of its own, the pause request
 * and its reason are fields of the lease hash (lua/prelude.lua). watchCancels, a subscription on a
 * connection of its own, is cancel-watch.ts.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  CancelRequestResult,
  OperationsOf,
  PauseHeldResult,
  PauseRequestResult,
  ResumeResult,
  RunControlStore,
} from '@baton/core/adapter';
import type { StoreContext } from './context.js';

async function requestCancel(
  ctx: StoreContext,
  runId: string,
  reason?: string,
): Promise<CancelRequestResult> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'request-cancel',
    [keys.lease(runId), keys.run(runId), keys.cancel(runId), keys.held, keys.timers],
    [keys.prefix, runId, reason ?? ''],
  )) as number[];
  return { found: reply[0] === 1, wake: reply[1] === 1, ...(reply[2] === 1 && { tooLate: true }) };
}

async function closeCancels(
  ctx: StoreContext,
  runId: string,
  epoch: number,
): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
  const reply = (await ctx.batched('close-cancels', [runId, epoch])) as [string, string?];
  if (reply[0] === 'closed') return { cancelRequested: false };
  if (reply[0] !== 'cancel-requested') throw new FencedWriteError(runId, epoch, 'control.closeCancels');
  // The flag is '1' or '1|<reason>' (request-cancel.lua).
  const flag = reply[1] ?? '1';
  return { cancelRequested: true, ...(flag.startsWith('1|') && { cancelReason: flag.slice(2) }) };
}

async function requestPause(ctx: StoreContext, runId: string, reason?: string): Promise<PauseRequestResult> {
  const { keys } = ctx;
  const reply = await ctx.run(
    'request-pause',
    [keys.lease(runId), keys.run(runId), keys.cancel(runId), keys.held, keys.timers],
    [keys.prefix, runId, reason ?? ''],
  );
  switch (reply) {
    case 'paused':
    case 'pause-requested':
    case 'finished':
    case 'cancel-requested':
      return { found: true, state: reply };
    case 'unknown':
      return { found: false };
    default:
      throw new Error(`request-pause answered ${String(reply)} for run ${runId}`);
  }
}

async function pauseHeld(ctx: StoreContext, runId: string, epoch: number): Promise<PauseHeldResult> {
  const { keys } = ctx;
  const reply = await ctx.run(
    'pause-held-run',
    [keys.lease(runId), keys.run(runId), keys.cancel(runId), keys.held, keys.timers],
    [keys.prefix, runId, epoch],
  );
  if (reply === 'paused') return { ok: true };
  if (reply === 'cancel-requested' || reply === 'not-requested') return { ok: false, reason: reply };
  throw new FencedWriteError(runId, epoch, 'control.pauseHeld');
}

async function resume(ctx: StoreContext, runId: string): Promise<ResumeResult> {
  const { keys } = ctx;
  const reply = await ctx.run(
    'resume-run',
    [keys.lease(runId), keys.run(runId), keys.held, keys.timers],
    [keys.prefix, runId],
  );
  return {
    found: reply !== 'unknown',
    resumed: reply === 'resumed' || reply === 'withdrawn',
    wake: reply === 'resumed',
  };
}

/** `store.control`'s operations on the connection (watchCancels is the store's). */
export const control: OperationsOf<StoreContext, RunControlStore> = {
  requestCancel,
  closeCancels,
  requestPause,
  pauseHeld,
  resume,
};
