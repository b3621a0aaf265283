/** Rate limits (`store.rateLimits`, contracts/rate-limits.ts) in the in-process store: a sliding log per name and key. */
import type { RateLimitAnswer, RateLimitRequest, RateLimitStore } from '../adapter/contracts/rate-limits.js';
import type { OperationsOf } from '../adapter/lifecycle.js';
import type { MemoryState } from './memory-state.js';

function take(state: MemoryState, request: RateLimitRequest): RateLimitAnswer {
  const { name, key, limit, perMs } = request;
  // A name never holds '|', so no name and key pair can spell another's.
  const bucket = `${name}|${key}`;
  const now = state.clock();
  // Grants at or before now - perMs have left the window (invariant 3); the rest stay in order.
  const grants = (state.rateGrants.get(bucket) ?? []).filter((at) => at > now - perMs);
  if (grants.length < limit) {
    grants.push(now);
    state.rateGrants.set(bucket, grants);
    return { granted: true, waitMs: 0 };
  }
  if (grants.length === 0) state.rateGrants.delete(bucket);
  else state.rateGrants.set(bucket, grants);
  // A place frees when the (length - limit + 1)-th oldest grant leaves the window (invariant 2).
  const freeing = grants[grants.length - limit]!;
  return { granted: false, waitMs: Math.max(1, freeing + perMs - now) };
}

/** `store.rateLimits` over the state. */
export const rateLimits: OperationsOf<MemoryState, RateLimitStore> = { take };
