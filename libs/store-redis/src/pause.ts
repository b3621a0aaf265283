/**
 * Pause and resume on Redis (RunControlStore.requestPause, pauseHeld, resume): one script call
 * each. The pause request and its reason are fields of the lease hash (lua/prelude.lua).
 */

import { FencedWriteError } from '@baton/core/adapter';
import type { PauseHeldResult, PauseRequestResult, ResumeResult } from '@baton/core/adapter';
import type { StoreContext } from './context.js';

export async function requestPause(
  ctx: StoreContext,
  runId: string,
  reason?: string,
): Promise<PauseRequestResult> {
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

export async function pauseHeldRun(
  ctx: StoreContext,
  runId: string,
  epoch: number,
): Promise<PauseHeldResult> {
  const { keys } = ctx;
  const reply = await ctx.run(
    'pause-held-run',
    [keys.lease(runId), keys.run(runId), keys.cancel(runId), keys.held, keys.timers],
    [keys.prefix, runId, epoch],
  );
  if (reply === 'paused') return { ok: true };
  if (reply === 'cancel-requested' || reply === 'not-requested') return { ok: false, reason: reply };
  throw new FencedWriteError(runId, epoch, 'pause');
}

export async function resumeRun(ctx: StoreContext, runId: string): Promise<ResumeResult> {
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
