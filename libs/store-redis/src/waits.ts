/**
 * Waiting runs on Redis: leases.suspend, the signal inbox, cancel requests and timers. Every
 * operation that changes state is one script call, one round trip.
 */

import { FencedWriteError } from '@baton/core/adapter';
import type {
  CancelRequestResult,
  DueTimer,
  InboxSignal,
  SuspendRequest,
  SuspendResult,
} from '@baton/core/adapter';
import { decodeInboxEntry, encodeInboxEntry } from './codec.js';
import { str, type StoreContext } from './context.js';

export async function suspendRun(ctx: StoreContext, request: SuspendRequest): Promise<SuspendResult> {
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
      throw new FencedWriteError(runId, epoch, 'suspend');
  }
}

export async function requestCancel(
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

export async function closeCancels(
  ctx: StoreContext,
  runId: string,
  epoch: number,
): Promise<{ cancelRequested: boolean; cancelReason?: string }> {
  const { keys } = ctx;
  const reply = (await ctx.run('close-cancels', [keys.lease(runId), keys.cancel(runId)], [epoch])) as [
    string,
    string?,
  ];
  if (reply[0] === 'closed') return { cancelRequested: false };
  if (reply[0] !== 'cancel-requested') throw new FencedWriteError(runId, epoch, 'close cancels');
  // The flag is '1' or '1|<reason>' (request-cancel.lua).
  const flag = reply[1] ?? '1';
  return { cancelRequested: true, ...(flag.startsWith('1|') && { cancelReason: flag.slice(2) }) };
}

export async function deliverSignal(
  ctx: StoreContext,
  runId: string,
  signal: Omit<InboxSignal, 'receivedAt'>,
): Promise<{ found: boolean; wake: boolean; dropped?: boolean }> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'deliver-signal',
    [keys.lease(runId), keys.run(runId), keys.signalNames(runId), keys.inbox(runId), keys.held, keys.timers],
    [keys.prefix, runId, signal.signalId, signal.name, encodeInboxEntry(signal)],
  )) as number[];
  if (reply[2] === 1) return { found: true, wake: false, dropped: true };
  return { found: reply[0] === 1, wake: reply[1] === 1 };
}

export async function readSignals(ctx: StoreContext, runId: string): Promise<InboxSignal[]> {
  const entries = await ctx.redis.lrange(ctx.keys.inbox(runId), 0, -1);
  return entries.map(decodeInboxEntry);
}

export async function claimDueTimers(
  ctx: StoreContext,
  limit: number,
  redeliverAfterMs: number,
): Promise<DueTimer[]> {
  const reply = (await ctx.run(
    'claim-due-timers',
    [ctx.keys.timers],
    [Math.floor(limit), redeliverAfterMs],
  )) as unknown[];
  const due: DueTimer[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    due.push({ runId: str(reply[i]), dueAt: Number(reply[i + 1]) });
  }
  return due;
}
