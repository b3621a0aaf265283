/**
 * RateLimitStore on Postgres (`store.rateLimits`; contracts/rate-limits.ts in @baton/core; migration 020): one
 * function call per ask, serialized per name and key by the row of its grant log.
 */
import type { OperationsOf, RateLimitAnswer, RateLimitRequest, RateLimitStore } from '@baton/core/adapter';
import type { Db } from './db.js';

async function take(db: Db, request: RateLimitRequest): Promise<RateLimitAnswer> {
  const rows = await db.query<{ granted: boolean; wait_ms: string }>(
    'SELECT granted, wait_ms FROM {{schema}}.take_rate_token($1, $2, $3, $4)',
    [request.name, request.key, request.limit, request.perMs],
  );
  const row = rows[0];
  if (row === undefined) throw new Error('take_rate_token returned no row');
  return { granted: row.granted, waitMs: Number(row.wait_ms) };
}

/** `store.rateLimits` over the pool. */
export const rateLimits: OperationsOf<Db, RateLimitStore> = { take };
