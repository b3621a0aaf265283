/**
 * Waiting runs on Redis: the signal inbox (`store.signals`) and timers (`store.timers`); what
 * suspends a run is leases.suspend (leases.ts), what wakes it by cancel control.requestCancel
 * (control.ts). Every operation that changes state is one script call, one round trip.
 */

import type { DueTimer, InboxSignal, OperationsOf, SignalInbox, TimerStore } from '@baton/core/adapter';
import { decodeInboxEntry, encodeInboxEntry } from './codec.js';
import { str, type StoreContext } from './context.js';

/** What `signals.deliver` answers (contracts/waits.ts). */
type Delivered = Awaited<ReturnType<SignalInbox['deliver']>>;

async function deliver(
  ctx: StoreContext,
  runId: string,
  signal: Omit<InboxSignal, 'receivedAt'>,
): Promise<Delivered> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'deliver-signal',
    [keys.lease(runId), keys.run(runId), keys.signalNames(runId), keys.inbox(runId), keys.held, keys.timers],
    [keys.prefix, runId, signal.signalId, signal.name, encodeInboxEntry(signal)],
  )) as [number, number, number?, unknown?];
  if (reply[3] !== undefined) {
    return { found: true, wake: false, continuedAs: str(reply[3]), ...(reply[2] === 1 && { dropped: true }) };
  }
  if (reply[2] === 1) return { found: true, wake: false, dropped: true };
  return { found: reply[0] === 1, wake: reply[1] === 1 };
}

async function read(ctx: StoreContext, runId: string): Promise<InboxSignal[]> {
  const entries = await ctx.redis.lrange(ctx.keys.inbox(runId), 0, -1);
  return entries.map(decodeInboxEntry);
}

async function claimDue(ctx: StoreContext, limit: number, redeliverAfterMs: number): Promise<DueTimer[]> {
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

/** `store.signals` on the connection. */
export const signals: OperationsOf<StoreContext, SignalInbox> = { deliver, read };

/** `store.timers` on the connection. */
export const timers: OperationsOf<StoreContext, TimerStore> = { claimDue };
