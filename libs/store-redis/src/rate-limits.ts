/**
 * RateLimitStore on Redis (`store.rateLimits`; contracts/rate-limits.ts in @baton/core): per name and key, a sorted set
 * of grant times on the server's clock, read and changed by one script per call
 * (lua/take-rate-token.lua). Needs PEXPIRE beside the README's other commands.
 */
import type { OperationsOf, RateLimitAnswer, RateLimitRequest, RateLimitStore } from '@baton/core/adapter';
import type { StoreContext } from './context.js';

async function take(ctx: StoreContext, request: RateLimitRequest): Promise<RateLimitAnswer> {
  const reply = (await ctx.run(
    'take-rate-token',
    [ctx.keys.rateLog(request.name, request.key)],
    [request.limit, request.perMs],
  )) as unknown[];
  return { granted: Number(reply[0]) === 1, waitMs: Number(reply[1]) };
}

/** `store.rateLimits` on the connection. */
export const rateLimits: OperationsOf<StoreContext, RateLimitStore> = { take };
