/**
 * ConcurrencyStore on Redis (`store.concurrency`; contracts/concurrency.ts in @baton/core): per key, a sorted set of
 * holders and one of waiting runs in arrival order, changed by one script per call (lua/prelude.lua,
 * `settle_slots`). Only commands the README's ACL already lists.
 */
import type { ConcurrencyStore, OperationsOf, SlotAnswer, SlotRequest, SlotState } from '@baton/core/adapter';
import { str, type StoreContext } from './context.js';

async function acquire(ctx: StoreContext, request: SlotRequest): Promise<SlotAnswer> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'acquire-slot',
    [keys.slotHolders(request.key), keys.slotWaiting(request.key), keys.slotSeq, keys.timers],
    [keys.prefix, request.runId, request.limit],
  )) as unknown[];
  return { acquired: Number(reply[0]) === 1, wake: reply.slice(1).map(str) };
}

async function release(ctx: StoreContext, request: SlotRequest): Promise<string[]> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'release-slot',
    [keys.slotHolders(request.key), keys.slotWaiting(request.key), keys.timers],
    [keys.prefix, request.runId, request.limit],
  )) as unknown[];
  return reply.map(str);
}

async function state(ctx: StoreContext, key: string): Promise<SlotState> {
  const [holders, waiting] = await Promise.all([
    ctx.redis.zrangebyscore(ctx.keys.slotHolders(key), '-inf', '+inf'),
    ctx.redis.zrangebyscore(ctx.keys.slotWaiting(key), '-inf', '+inf'),
  ]);
  return { holders, waiting };
}

/** `store.concurrency` on the connection. */
export const concurrency: OperationsOf<StoreContext, ConcurrencyStore> = { acquire, release, state };
