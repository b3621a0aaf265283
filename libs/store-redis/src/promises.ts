/**
 * PromiseStore on Redis (`store.promises`; contracts/promises.ts in @baton/core): one hash per
 * promise (`promise:<token>`) and a sorted set of each run's tokens by step (`run-promises:<runId>`),
 * which the run's deletion drops with the hashes (drop_run in lua/prelude.lua). Creating, completing
 * and expiring are one script each (create-promise.lua, complete-promise.lua, expire-promise.lua);
 * a completion's inbox entry and wake-up are written by the same script as the record, so it is
 * atomic with the inbox check of leases.suspend.
 */
import type { OperationsOf, PromiseCompleteResult, PromiseRecord, PromiseStore } from '@baton/core/adapter';
import { decodeValue } from './codec.js';
import { pipelineResults, str, type StoreContext } from './context.js';

async function create(ctx: StoreContext, promise: Parameters<PromiseStore['create']>[0]): Promise<void> {
  const { keys } = ctx;
  await ctx.run(
    'create-promise',
    [keys.promise(promise.token), keys.runPromises(promise.runId)],
    [
      promise.runId,
      promise.seq,
      promise.timeoutAt === null ? '' : promise.timeoutAt,
      promise.schema === undefined ? '' : JSON.stringify(promise.schema),
      promise.token,
    ],
  );
}

async function complete(
  ctx: StoreContext,
  token: string,
  completion: { outcome: 'resolved' | 'rejected'; payload: unknown },
): Promise<PromiseCompleteResult> {
  const { keys } = ctx;
  const reply = (await ctx.run(
    'complete-promise',
    [keys.promise(token), keys.held, keys.timers],
    [keys.prefix, completion.outcome, JSON.stringify(completion.payload ?? null)],
  )) as unknown[];
  if (Number(reply[0]) !== 1) return { found: false };
  if (Number(reply[1]) === 1)
    return { found: true, completed: true, runId: str(reply[3]), wake: Number(reply[2]) === 1 };
  // Not pending, or its run finished: the record as it is now (a record leaves only with its run).
  const record = await get(ctx, token);
  if (record === undefined) return { found: false };
  if (reply[3] !== undefined) {
    return { found: true, completed: false, record, runFinished: true, continuedAs: str(reply[3]) };
  }
  return Number(reply[2]) === 1
    ? { found: true, completed: false, record, runFinished: true }
    : { found: true, completed: false, record };
}

async function expire(ctx: StoreContext, token: string): Promise<PromiseRecord | undefined> {
  const reply = (await ctx.run('expire-promise', [ctx.keys.promise(token)], [])) as unknown[];
  return decodePromise(token, pairs(reply));
}

async function get(ctx: StoreContext, token: string): Promise<PromiseRecord | undefined> {
  return decodePromise(token, await ctx.redis.hgetall(ctx.keys.promise(token)));
}

async function forRun(ctx: StoreContext, runId: string): Promise<PromiseRecord[]> {
  const tokens = await ctx.redis.zrangebyscore(ctx.keys.runPromises(runId), '-inf', '+inf');
  if (tokens.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const token of tokens) pipeline.hgetall(ctx.keys.promise(token));
  const hashes = pipelineResults(await pipeline.exec()) as Array<Record<string, string>>;
  return tokens.flatMap((token, i) => {
    const record = decodePromise(token, hashes[i] ?? {});
    return record === undefined ? [] : [record];
  });
}

/** A flat `[field, value, …]` reply as an object. */
function pairs(reply: readonly unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) out[str(reply[i])] = str(reply[i + 1]);
  return out;
}

/** A promise from its hash's fields (create-promise.lua names them), or undefined when there are none. */
function decodePromise(token: string, fields: Record<string, string>): PromiseRecord | undefined {
  if (fields.run === undefined) return undefined;
  const record: PromiseRecord = {
    token,
    runId: fields.run,
    seq: Number(fields.seq),
    state: fields.state as PromiseRecord['state'],
    timeoutAt: fields.timeout === undefined ? null : Number(fields.timeout),
    createdAt: Number(fields.created),
  };
  if (fields.schema !== undefined) record.schema = JSON.parse(fields.schema) as Record<string, unknown>;
  if (fields.completed !== undefined) record.completedAt = Number(fields.completed);
  if (fields.payload !== undefined) record.payload = decodeValue(fields.payload);
  return record;
}

/** `store.promises` on the connection. */
export const promises: OperationsOf<StoreContext, PromiseStore> = { create, complete, expire, get, forRun };
